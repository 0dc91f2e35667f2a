#include "evaluator/evaluation_loop.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/manifest.h"
#include "common/config/job_mode.h"
#include "common/config/metric_names.h"
#include "common/export/checkpoint_loader.h"
#include "common/export/export_writer.h"
#include "common/job/model_exporter.h"
#include "common/status/error_reason.h"
#include "common/summary/file_summary_writer.h"
#include "common/summary/scalar_jsonl.h"
#include "evaluator/model_evaluation.h"
#include "glog/logging.h"

namespace pstrain {
namespace evaluator {
namespace {

// "accuracy=0.85 loss=0.41" for logs.
std::string MetricsString(const std::map<std::string, double>& metrics) {
  return absl::StrJoin(metrics, " ", absl::PairFormatter("="));
}

absl::string_view StatusLabel(EvalStatus status) {
  switch (status) {
    case EVAL_STATUS_MISSING_CHECKPOINT:
      return "missing_checkpoint";
    case EVAL_STATUS_NO_NEW_CHECKPOINT:
      return "no_new_checkpoint";
    case EVAL_STATUS_FAILED:
      return "failed";
    case EVAL_STATUS_SKIPPED:
      return "skipped";
    default:
      return "evaluated";
  }
}

}  // namespace

// One job as the evaluation thread works on it.
struct EvaluationLoop::JobContext {
  std::string job_id;
  JobSpec spec;
  std::string model_dir;
  absl::Time taken_up;
  std::unique_ptr<ModelEvaluator> evaluator;
  std::unique_ptr<ModelExporter> exporter;   // null: exports disabled
  std::unique_ptr<SummaryWriter> summaries;  // null: no summaries
  // Metrics of every step evaluated, also before a restart (from the eval
  // summaries), so a final checkpoint evaluated already is reported again
  // rather than recomputed.
  std::map<int64_t, std::map<std::string, double>> history;
  // continuous_eval: the newest step seen in model_dir, and when a new one
  // last appeared.
  int64_t newest_listed = -1;
  absl::Time last_new_checkpoint;
  // Set once the job's last evaluation has been reported.
  bool done = false;
};

EvaluationLoop::EvaluationLoop(std::shared_ptr<grpc::Channel> coordinator, Env& env, Clock& clock,
                               EvaluatorMetrics& metrics, EvaluationLoopOptions options)
    : env_(env), clock_(clock), metrics_(metrics), options_(std::move(options)) {
  MemberSessionOptions member;
  member.task = options_.task;
  member.address = options_.address;
  member.metrics_address = options_.metrics_address;
  member.coordinator_address = options_.coordinator_address;
  member.call_timeout = options_.call_timeout;
  member.retry = options_.retry;
  member.on_membership = options_.on_membership;
  member.on_heartbeat = [this](const HeartbeatRequest& sent, const HeartbeatResponse& answer) {
    NoteHeartbeat(sent, answer);
  };
  absl::StatusOr<std::unique_ptr<MemberSession>> session = MemberSession::Create(
      std::move(coordinator), std::move(member), options_.incarnation, clock_, random_);
  CHECK(session.ok()) << "evaluator: " << session.status();
  member_ = *std::move(session);
  client_ = std::make_unique<CoordinatorClient>(*member_, options_.watch_timeout);
}

EvaluationLoop::~EvaluationLoop() {
  Stop();
  // The session's heartbeat thread calls back into this loop: end it while
  // the loop is whole.
  client_.reset();
  member_.reset();
}

void EvaluationLoop::Start() {
  run_thread_ = std::thread([this] {
    absl::Status status = Run();
    if (!status.ok()) LOG(ERROR) << "evaluator: " << status;
  });
}

void EvaluationLoop::Stop() {
  stop_.Stop();
  member_->Cancel();
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (active_watch_ != nullptr) active_watch_->Cancel();
  }
  if (run_thread_.joinable()) run_thread_.join();
}

bool EvaluationLoop::stopping() {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

absl::Status EvaluationLoop::run_status() {
  absl::MutexLock lock(&mu_);
  return run_status_;
}

bool EvaluationLoop::shutdown_requested() {
  absl::MutexLock lock(&mu_);
  return shutdown_requested_;
}

absl::Status EvaluationLoop::Run() {
  MemberLoopOptions options;
  options.assignment_wait = options_.assignment_wait;
  options.pauses = options_.retry;
  // Assignments of the evaluator carry no generation: a restarted
  // coordinator resumes the job under the same id and has forgotten its
  // evaluations, so the job is followed again.
  options.rerun_after_reregistration = true;
  MemberLoop member(*member_, *this, options);
  const absl::Status served = member.Run();
  stop_.Stop();
  member_->Cancel();
  absl::MutexLock lock(&mu_);
  run_status_ = served;
  return run_status_;
}

absl::Status EvaluationLoop::RunAssignment(const Assignment& assignment) {
  if (!JobModeEvaluates(assignment.spec().mode())) {
    LOG(INFO) << "evaluator: job " << assignment.job_id() << " does not evaluate; idle";
    return absl::OkStatus();
  }
  RunJob(assignment);
  return absl::OkStatus();
}

void EvaluationLoop::DescribeSelf(HeartbeatRequest* beat) {
  absl::MutexLock lock(&mu_);
  beat->set_job_id(current_job_);
  if (schedule_.has_value()) {
    beat->set_step(std::max<int64_t>(0, schedule_->newest_evaluated()));
    beat->set_queue_depth(schedule_->pending_count());
  }
  beat->set_health(last_problem_.empty() ? MEMBER_HEALTH_OK : MEMBER_HEALTH_DEGRADED);
  beat->set_health_detail(last_problem_);
}

void EvaluationLoop::NoteHeartbeat(const HeartbeatRequest& sent, const HeartbeatResponse& answer) {
  absl::MutexLock lock(&mu_);
  // Only an answer about the job still worked on tells of a change.
  if (!current_job_.empty() && sent.job_id() == current_job_ &&
      answer.job_id() != current_job_ && !job_changed_) {
    LOG(INFO) << "evaluator: the coordinator moved from job " << current_job_ << " to "
              << (answer.job_id().empty() ? "none" : answer.job_id());
    job_changed_ = true;
    if (active_watch_ != nullptr) active_watch_->Cancel();
  }
}

void EvaluationLoop::ShutDown() {
  {
    absl::MutexLock lock(&mu_);
    shutdown_requested_ = true;
    stopping_ = true;
    if (active_watch_ != nullptr) active_watch_->Cancel();
  }
  stop_.Stop();
  member_->Cancel();
  if (options_.on_shutdown) options_.on_shutdown(member_->last_heartbeat().exit_code);
}

EvalReport EvaluationLoop::NewReport(const std::string& job_id) const {
  EvalReport report;
  report.set_job_id(job_id);
  return report;
}

void EvaluationLoop::Report(EvalReport report, absl::Duration took,
                            const std::map<std::string, double>& metrics) {
  report.set_seconds(absl::ToDoubleSeconds(took));
  {
    absl::MutexLock lock(&mu_);
    last_problem_ = report.status() == EVAL_STATUS_MISSING_CHECKPOINT
                        ? absl::StrCat("step ", report.checkpoint_step(), ": ", report.reason())
                        : "";
  }
  metrics_.RecordEvaluation(StatusLabel(report.status()), report.checkpoint_step(), took,
                            report.examples(), metrics);
  Send(report);
}

void EvaluationLoop::Send(const EvalReport& report) {
  absl::StatusOr<EvalReportResponse> response = client_->ReportEval(report);
  if (!response.ok()) LOG(WARNING) << "evaluator: " << response.status();
}

void EvaluationLoop::Release(const std::string& job_id, int64_t step) {
  absl::Status status = client_->ReleaseCheckpoint(job_id, step);
  // The lease also ends with the stream, so a failure only delays deletion.
  if (!status.ok()) LOG(WARNING) << "evaluator: lease of step " << step << ": " << status;
}

void EvaluationLoop::HandleSkipped(const std::string& job_id,
                                   const std::vector<SkippedCandidate>& skipped) {
  for (const SkippedCandidate& s : skipped) {
    LOG(INFO) << "evaluator: skipping ckpt-" << s.checkpoint.step << " of job " << job_id << ": "
              << SkipReasonLabel(s.reason);
    metrics_.RecordSkipped(SkipReasonLabel(s.reason));
    EvalReport report = NewReport(job_id);
    report.set_checkpoint_step(s.checkpoint.step);
    report.set_status(EVAL_STATUS_SKIPPED);
    report.set_reason(std::string(SkipReasonDescription(s.reason)));
    Send(report);
    if (s.checkpoint.leased) Release(job_id, s.checkpoint.step);
  }
}

void EvaluationLoop::RunJob(const Assignment& assignment) {
  JobContext job;
  job.job_id = assignment.job_id();
  job.spec = assignment.spec();
  job.model_dir = job.spec.checkpoint().model_dir();
  job.taken_up = clock_.Now();
  job.last_new_checkpoint = job.taken_up;
  const EvalSpec& eval = job.spec.eval();
  {
    absl::MutexLock lock(&mu_);
    current_job_ = job.job_id;
    job_changed_ = false;
    stream_ended_ = false;
    pending_changed_ = false;
    schedule_.emplace(job.taken_up, absl::Seconds(eval.start_delay_secs()),
                      absl::Seconds(eval.has_throttle_secs() ? eval.throttle_secs() : 10));
  }
  LOG(INFO) << "evaluator: job " << job.job_id << " (" << JobMode_Name(job.spec.mode())
            << "), model_dir " << job.model_dir;

  if (absl::Status prepared = PrepareJob(job); !prepared.ok()) {
    LOG(ERROR) << "evaluator: job " << job.job_id << " cannot be evaluated: " << prepared;
    EvalReport report = NewReport(job.job_id);
    report.set_status(EVAL_STATUS_FAILED);
    report.set_reason(std::string(prepared.message()));
    Report(report, absl::ZeroDuration(), {});
  } else if (job.spec.mode() == JOB_MODE_EVAL) {
    EvaluateNewestOnce(job);
  } else {
    std::thread watcher;
    if (job.spec.mode() != JOB_MODE_CONTINUOUS_EVAL) {
      {
        absl::MutexLock lock(&mu_);
        watching_ = true;
      }
      watcher = std::thread([this, id = job.job_id] { WatchLoop(id); });
    }
    FollowCheckpoints(job);
    {
      absl::MutexLock lock(&mu_);
      watching_ = false;
      if (active_watch_ != nullptr) active_watch_->Cancel();
    }
    if (watcher.joinable()) watcher.join();
  }

  std::vector<CheckpointCandidate> abandoned;
  {
    absl::MutexLock lock(&mu_);
    abandoned = schedule_->Clear();
    schedule_.reset();
    current_job_.clear();
  }
  for (const CheckpointCandidate& checkpoint : abandoned) {
    metrics_.RecordSkipped("abandoned");
    if (checkpoint.leased) Release(job.job_id, checkpoint.step);
  }
  if (job.summaries != nullptr) {
    if (absl::Status closed = job.summaries->Close(); !closed.ok()) {
      LOG(WARNING) << "evaluator: eval summaries of " << job.model_dir << ": " << closed;
    }
  }
  LOG(INFO) << "evaluator: done with job " << job.job_id;
}

absl::Status EvaluationLoop::PrepareJob(JobContext& job) {
  if (job.model_dir.empty()) {
    return absl::InvalidArgumentError("the job has no checkpoint.model_dir");
  }
  absl::StatusOr<std::unique_ptr<ModelEvaluator>> evaluator = ModelEvaluator::Create(job.spec);
  if (!evaluator.ok()) return evaluator.status();
  job.evaluator = std::move(evaluator).value();

  absl::StatusOr<std::unique_ptr<ModelExporter>> exporter = ModelExporter::Create(env_, job.spec);
  if (exporter.ok()) {
    job.exporter = std::move(exporter).value();
  } else {
    LOG(WARNING) << "evaluator: exports of job " << job.job_id
                 << " disabled: " << exporter.status();
  }
  absl::StatusOr<std::unique_ptr<SummaryWriter>> summaries =
      options_.open_summary_writer
          ? options_.open_summary_writer(job.model_dir)
          : absl::StatusOr<std::unique_ptr<SummaryWriter>>(
                FileSummaryWriter::Open(&env_, EvalSummaryDir(job.model_dir)));
  if (summaries.ok()) {
    job.summaries = std::move(summaries).value();
  } else {
    LOG(WARNING) << "evaluator: eval summaries of job " << job.job_id
                 << " disabled: " << summaries.status();
  }

  // What was evaluated before (an earlier run of the evaluator, or the job
  // this one resumes), from the eval summaries.
  ScalarJsonlReadOptions read_options;
  read_options.allow_truncated_tail = true;
  absl::StatusOr<std::vector<ScalarRecord>> records = ReadScalarJsonl(
      env_, JoinPath(EvalSummaryDir(job.model_dir), kScalarJsonlFileName), read_options);
  if (records.ok()) {
    for (const ScalarRecord& record : *records) {
      if (IsKnownMetricName(record.tag)) job.history[record.step][record.tag] = record.value;
    }
  } else if (!absl::IsNotFound(records.status())) {
    LOG(WARNING) << "evaluator: earlier evaluations unknown: " << records.status();
  }
  absl::MutexLock lock(&mu_);
  for (const auto& entry : job.history) schedule_->MarkEvaluated(entry.first);
  return absl::OkStatus();
}

void EvaluationLoop::EvaluateNewestOnce(JobContext& job) {
  absl::StatusOr<RestorableCheckpointSearch> search = FindRestorableCheckpoint(env_, job.model_dir);
  const absl::Time start = clock_.Now();
  EvalReport report = NewReport(job.job_id);
  report.set_final(true);
  if (!search.ok() || !search->checkpoint) {
    report.set_status(EVAL_STATUS_MISSING_CHECKPOINT);
    std::string reason = search.ok() ? absl::StrCat("no complete checkpoint in ", job.model_dir)
                                     : std::string(search.status().message());
    if (search.ok() && !search->skipped.empty()) {
      absl::StrAppend(&reason, "; skipped ",
                      absl::StrJoin(search->skipped, "; ",
                                    [](std::string* out, const pstrain::SkippedCheckpoint& s) {
                                      absl::StrAppend(out, s.reason.message());
                                    }));
    }
    report.set_reason(reason);
    metrics_.RecordSkipped("missing_checkpoint");
    LOG(WARNING) << "evaluator: job " << job.job_id << ": " << reason;
    Report(report, clock_.Now() - start, {});
    return;
  }
  CheckpointCandidate newest;
  newest.step = search->checkpoint->step;
  newest.path = search->checkpoint->path;
  newest.final = true;
  EvaluateAndReport(job, newest);
}

void EvaluationLoop::WatchLoop(std::string job_id) {
  int64_t after_step = 0;
  bool over = false;
  RetryOptions pauses = options_.retry;
  pauses.log_every = options_.log_waits_every;
  // Ends once `over` or stopped; WatchOnce has said why.
  RepeatUntilStopped(
      absl::StrCat(member_->CoordinatorName(), " (checkpoints of job ", job_id, ")"), pauses,
      waits_, [&over](const absl::Status&) { return !over; },
      [&] { return WatchOnce(job_id, after_step, over); })
      .IgnoreError();
}

absl::Status EvaluationLoop::WatchOnce(const std::string& job_id, int64_t& after_step,
                                       bool& over) {
  WatchCheckpointsRequest request;
  request.set_job_id(job_id);
  request.set_after_step(after_step);
  std::unique_ptr<CheckpointWatch> watch = client_->WatchCheckpoints(request);
  {
    absl::MutexLock lock(&mu_);
    over = stopping_ || job_changed_ || !watching_;
    if (over) return absl::CancelledError("the watch ends");
    active_watch_ = watch.get();
  }
  absl::Status ended;
  bool delivered = false;
  while (true) {
    absl::StatusOr<CheckpointNotification> notification = watch->Next();
    if (!notification.ok()) {
      ended = notification.status();
      break;
    }
    delivered = true;
    const CheckpointInfo& info = notification->checkpoint();
    after_step = std::max(after_step, info.step());
    CheckpointCandidate checkpoint;
    checkpoint.step = info.step();
    checkpoint.path = info.path();
    checkpoint.final = info.final();
    checkpoint.leased = true;
    std::vector<SkippedCandidate> skipped;
    {
      absl::MutexLock lock(&mu_);
      if (!schedule_) break;
      skipped = schedule_->Offer(checkpoint);
      pending_changed_ = true;
    }
    HandleSkipped(job_id, skipped);
  }
  {
    absl::MutexLock lock(&mu_);
    active_watch_ = nullptr;
    if (absl::IsOutOfRange(ended) || absl::IsFailedPrecondition(ended)) {
      LOG(INFO) << "evaluator: checkpoints of job " << job_id << " are over: " << ended;
      stream_ended_ = true;
      over = true;
    }
    over = over || stopping_ || job_changed_ || !watching_;
  }
  if (over) return absl::CancelledError("the watch ends");
  // The coordinator forgot this evaluator (it restarted) or marked it lost:
  // the same incarnation registers again, and the stream reopens at once.
  if (NeedsRegistration(ended) && member_->Register().ok()) return absl::OkStatus();
  if (delivered) return absl::OkStatus();
  // Said every log_waits_every by the loop while the breaks go on.
  VLOG(1) << "evaluator: checkpoint stream of job " << job_id << " broke (" << ended
          << "); reopening after step " << after_step;
  return ended.ok() ? absl::UnavailableError("the checkpoint stream ended") : ended;
}

void EvaluationLoop::PollModelDir(JobContext& job) {
  absl::StatusOr<std::vector<CheckpointRef>> listed = ListCheckpoints(env_, job.model_dir);
  if (!listed.ok()) {
    LOG(WARNING) << "evaluator: cannot list " << job.model_dir << ": " << listed.status();
    return;
  }
  for (const CheckpointRef& ref : *listed) {
    if (ref.step <= job.newest_listed) continue;
    job.newest_listed = ref.step;
    job.last_new_checkpoint = clock_.Now();
    CheckpointCandidate checkpoint;
    checkpoint.step = ref.step;
    checkpoint.path = ref.path;
    // A MANIFEST that cannot be read leaves the flag unset; verification
    // reports the damage when the checkpoint's turn comes.
    absl::StatusOr<CheckpointManifest> manifest = ReadManifest(env_, ref.path);
    checkpoint.final = manifest.ok() && manifest->final();
    std::vector<SkippedCandidate> skipped;
    {
      absl::MutexLock lock(&mu_);
      skipped = schedule_->Offer(checkpoint);
      pending_changed_ = true;
    }
    HandleSkipped(job.job_id, skipped);
  }
}

void EvaluationLoop::FollowCheckpoints(JobContext& job) {
  const bool polling = job.spec.mode() == JOB_MODE_CONTINUOUS_EVAL;
  const int64_t max_steps = job.spec.stop().max_steps();
  absl::Time next_poll = clock_.Now();
  const absl::Time waiting_since = clock_.Now();
  absl::Time next_log = waiting_since + options_.log_waits_every;
  while (!job.done) {
    if (polling && clock_.Now() >= next_poll) {
      PollModelDir(job);
      next_poll = clock_.Now() + options_.model_dir_poll_interval;
    }
    std::optional<CheckpointCandidate> next;
    std::vector<SkippedCandidate> skipped;
    bool over = false;
    absl::Time ready_at;
    {
      absl::MutexLock lock(&mu_);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || job_changed_ || pending_changed_ || stream_ended_;
      };
      ready_at = schedule_->ReadyAt();
      absl::Time deadline = std::min(ready_at, next_log);
      if (polling) deadline = std::min(deadline, next_poll);
      if (polling && options_.continuous_eval_timeout != absl::InfiniteDuration()) {
        deadline = std::min(deadline, job.last_new_checkpoint + options_.continuous_eval_timeout);
      }
      clock_.AwaitWithDeadline(&mu_, absl::Condition(&woken), deadline);
      pending_changed_ = false;
      if (stopping_ || job_changed_) return;
      next = schedule_->Take(clock_.Now(), &skipped);
      ready_at = schedule_->ReadyAt();
      over = !next && stream_ended_ && !schedule_->has_pending();
    }
    HandleSkipped(job.job_id, skipped);
    if (next) {
      const EvalStatus status = EvaluateAndReport(job, *next);
      (void)status;
      if (next->final || (polling && max_steps > 0 && next->step >= max_steps)) job.done = true;
      next_log = clock_.Now() + options_.log_waits_every;
      continue;
    }
    if (over) return;
    const absl::Time now = clock_.Now();
    if (polling && options_.continuous_eval_timeout != absl::InfiniteDuration() &&
        ready_at == absl::InfiniteFuture() &&
        now >= job.last_new_checkpoint + options_.continuous_eval_timeout) {
      EvalReport report = NewReport(job.job_id);
      report.set_status(EVAL_STATUS_NO_NEW_CHECKPOINT);
      report.set_final(true);
      int64_t newest;
      {
        absl::MutexLock lock(&mu_);
        newest = std::max<int64_t>(0, schedule_->newest_evaluated());
      }
      report.set_checkpoint_step(newest);
      report.set_reason(absl::StrCat("no new checkpoint in ", job.model_dir, " for ",
                                     absl::FormatDuration(options_.continuous_eval_timeout)));
      LOG(INFO) << "evaluator: job " << job.job_id << ": " << report.reason();
      Report(report, absl::ZeroDuration(), {});
      job.done = true;
      return;
    }
    if (now >= next_log) {
      if (ready_at != absl::InfiniteFuture()) {
        LOG(INFO) << "evaluator: job " << job.job_id << ": the next checkpoint waits for "
                  << (ready_at > now ? absl::FormatDuration(ready_at - now) : "its turn")
                  << " (start_delay_secs / throttle_secs)";
      } else {
        LOG(INFO) << "evaluator: waiting for a checkpoint of job " << job.job_id << " since "
                  << absl::FormatDuration(now - waiting_since)
                  << (polling ? absl::StrCat(" in ", job.model_dir) : "");
      }
      next_log = now + options_.log_waits_every;
    }
  }
}

EvalStatus EvaluationLoop::EvaluateAndReport(JobContext& job,
                                             const CheckpointCandidate& checkpoint) {
  const absl::Time start = clock_.Now();
  EvalReport report = NewReport(job.job_id);
  report.set_checkpoint_step(checkpoint.step);
  report.set_final(checkpoint.final);
  std::map<std::string, double> metrics;
  std::string reason;
  const EvalStatus status = EvaluateInto(job, checkpoint, report, metrics, &reason);
  report.set_status(status);
  report.set_reason(reason);
  if (status != EVAL_STATUS_EVALUATED) {
    LOG(WARNING) << "evaluator: ckpt-" << checkpoint.step << " of job " << job.job_id << ": "
                 << StatusLabel(status) << ": " << reason;
    if (status == EVAL_STATUS_MISSING_CHECKPOINT) metrics_.RecordSkipped("missing_checkpoint");
  }
  {
    absl::MutexLock lock(&mu_);
    if (schedule_) schedule_->MarkEvaluated(checkpoint.step);
  }
  // Released first: once the report is in, the job may end and its stream
  // with it.
  if (checkpoint.leased) Release(job.job_id, checkpoint.step);
  Report(report, clock_.Now() - start, metrics);
  return status;
}

EvalStatus EvaluationLoop::EvaluateInto(JobContext& job, const CheckpointCandidate& checkpoint,
                                        EvalReport& report, std::map<std::string, double>& metrics,
                                        std::string* reason) {
  const absl::Time start = clock_.Now();
  if (auto found = job.history.find(checkpoint.step); found != job.history.end()) {
    // Evaluated before (e.g. by an evaluator that restarted since): the
    // result stands; the job still gets its report.
    metrics = found->second;
    for (const auto& [name, value] : metrics) (*report.mutable_metrics())[name] = value;
    LOG(INFO) << "evaluator: ckpt-" << checkpoint.step << " of job " << job.job_id
              << " was evaluated before: " << MetricsString(metrics);
    return EVAL_STATUS_EVALUATED;
  }
  auto refused = [reason](EvalStatus status, const absl::Status& why) {
    *reason = std::string(why.message());
    return status;
  };
  // Sizes only: LoadCheckpointParameters checks every byte as it reads.
  VerifyOptions verify;
  verify.check_contents = false;
  absl::StatusOr<CheckpointManifest> manifest = VerifyCheckpoint(env_, checkpoint.path, verify);
  if (!manifest.ok()) return refused(EVAL_STATUS_MISSING_CHECKPOINT, manifest.status());
  if (manifest->final()) report.set_final(true);
  absl::StatusOr<std::unique_ptr<ModelParameters>> parameters = job.evaluator->NewParameters();
  if (!parameters.ok()) return refused(EVAL_STATUS_FAILED, parameters.status());
  if (absl::Status loaded =
          LoadCheckpointParameters(env_, checkpoint.path, *manifest, parameters->get());
      !loaded.ok()) {
    const bool damaged = absl::IsNotFound(loaded) || absl::IsDataLoss(loaded);
    return refused(damaged ? EVAL_STATUS_MISSING_CHECKPOINT : EVAL_STATUS_FAILED, loaded);
  }
  absl::StatusOr<EvaluationResult> result = job.evaluator->Evaluate(**parameters);
  if (!result.ok()) return refused(EVAL_STATUS_FAILED, result.status());
  metrics = result->metrics;
  job.history[checkpoint.step] = metrics;
  for (const auto& [name, value] : metrics) (*report.mutable_metrics())[name] = value;
  report.set_examples(result->examples);

  WriteSummaries(job, checkpoint.step, metrics);
  const std::string exported = Export(job, checkpoint, **parameters, metrics, report);
  LOG(INFO) << "evaluator: ckpt-" << checkpoint.step << " of job " << job.job_id
            << (report.final() ? " (final)" : "") << " in "
            << absl::FormatDuration(clock_.Now() - start) << ": " << MetricsString(metrics)
            << (exported.empty() ? "" : absl::StrCat("; exported ", exported));
  return EVAL_STATUS_EVALUATED;
}

void EvaluationLoop::WriteSummaries(JobContext& job, int64_t step,
                                    const std::map<std::string, double>& metrics) {
  if (job.summaries == nullptr) return;
  absl::Status written;
  for (const auto& [name, value] : metrics)
    written.Update(job.summaries->WriteScalar(step, name, value));
  written.Update(job.summaries->Flush());
  if (!written.ok()) LOG(WARNING) << "evaluator: eval summaries: " << written;
}

std::string EvaluationLoop::Export(JobContext& job, const CheckpointCandidate& checkpoint,
                                   const ModelParameters& parameters,
                                   const std::map<std::string, double>& metrics,
                                   EvalReport& report) {
  if (job.exporter == nullptr) return "";
  ExportSource source;
  source.spec = job.spec;
  source.dataset = job.evaluator->model_info();
  source.global_step = checkpoint.step;
  source.job_id = job.job_id;
  source.metrics = metrics;
  source.source_checkpoint = checkpoint.path;
  absl::StatusOr<ExportResult> exports =
      job.exporter->Export(
          source, job.evaluator->model(), parameters,
          report.final() ? CheckpointKind::kFinal : CheckpointKind::kPeriodic);
  if (!exports.ok()) {
    LOG(WARNING) << "evaluator: export of ckpt-" << checkpoint.step << ": " << exports.status();
    return "";
  }
  report.set_export_path(exports->best_path.empty() ? exports->final_path : exports->best_path);
  report.set_final_export_path(exports->final_path);
  std::vector<std::string> paths;
  if (!exports->best_path.empty()) {
    metrics_.RecordExport("best");
    paths.push_back(exports->best_path);
  }
  if (!exports->final_path.empty()) {
    metrics_.RecordExport("final");
    paths.push_back(exports->final_path);
  }
  return absl::StrJoin(paths, " ");
}

}  // namespace evaluator
}  // namespace pstrain
