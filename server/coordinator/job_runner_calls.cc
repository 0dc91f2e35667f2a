// The JobRunner methods that cluster RPCs and the coordinator call while the
// job runs (job_runner.cc holds the job's own thread).

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "server/coordinator/job_runner.h"
#include "server/coordinator/task_name.h"
#include "server/coordinator/task_work.h"

namespace pstrain {
namespace coordinator {
namespace {

// WatchCheckpoints: the job's checkpoints newer than the watcher's position,
// each leased to the watcher as it is handed to the stream, until the job
// ends. The leases end with the stream.
class CheckpointWatch final : public StreamSource<CheckpointNotification> {
 public:
  CheckpointWatch(std::string job_id, std::string holder, int64_t after_step,
                  std::shared_ptr<CheckpointFeed> feed, std::shared_ptr<RetentionPolicy> retention,
                  std::weak_ptr<JobRunner> runner)
      : job_id_(std::move(job_id)),
        holder_(std::move(holder)),
        feed_(std::move(feed)),
        retention_(std::move(retention)),
        runner_(std::move(runner)) {
    position_.step = after_step;
  }

  Next Poll(std::function<void()> wake) override {
    Next next;
    for (;;) {
      CheckpointFeed::Read read = feed_->ReadAfter(position_, wake);
      for (CheckpointInfo& info : read.checkpoints) {
        CheckpointFeed::Advance(position_, info);
        // A checkpoint being deleted (max_to_keep) cannot be leased: skip it.
        if (!retention_->Acquire(info.step(), holder_).ok()) continue;
        CheckpointNotification notification;
        notification.set_job_id(job_id_);
        *notification.mutable_checkpoint() = std::move(info);
        next.messages.push_back(std::move(notification));
      }
      if (read.closed) next.end = absl::OkStatus();
      next.wait_id = read.wait_id;
      // Only skipped checkpoints: read on from the new position.
      if (next.messages.empty() && !next.end.has_value() && next.wait_id == 0) continue;
      return next;
    }
  }

  void CancelWait(uint64_t wait_id) override { feed_->CancelWait(wait_id); }

  void Close() override {
    const int released = retention_->ReleaseHolder(holder_);
    if (released > 0) {
      VLOG(1) << holder_ << " stopped watching checkpoints of " << job_id_ << "; released "
              << released;
    }
    if (std::shared_ptr<JobRunner> runner = runner_.lock()) runner->MembersChanged();
  }

 private:
  const std::string job_id_;
  const std::string holder_;
  const std::shared_ptr<CheckpointFeed> feed_;
  const std::shared_ptr<RetentionPolicy> retention_;
  const std::weak_ptr<JobRunner> runner_;
  FeedPosition position_;
};

}  // namespace

absl::StatusOr<ProgressResponse> JobRunner::ReportProgress(const ProgressReport& report) {
  const std::string holder = HolderName(report.task(), report.incarnation());
  ASSIGN_OR_RETURN(const std::shared_ptr<const JobParts> parts,
                   AdmitCall(JobCall::kReportProgress));
  if (report.generation() != 0 && report.generation() != generation_) {
    // Steps of a run the job rolled back from: they are not in the
    // parameters any more.
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "job ", job_id_, " rolled back to a checkpoint; the work of generation ",
                          report.generation(), " is void: take the job's new assignment")),
                      ERROR_REASON_RUN_ROLLED_BACK);
  }
  if (parts == nullptr || parts->step == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id_, " does not train; it takes no progress reports"));
  }
  absl::StatusOr<int64_t> step =
      DealsLeasesToSyncSlots(*parts)
          ? parts->step->RaiseTo(report.parameter_version())
          : parts->step->Advance(holder, report.sequence(), report.applied_updates());
  if (!step.ok()) return step.status();
  std::optional<double> loss;
  if (report.steps() > 0) loss = report.loss();
  std::optional<StopDecision> decision = parts->stop->OnProgress(*step, loss);
  if (!decision.has_value()) decision = CheckEndOfData(*parts, *step);

  double rate = 0;
  double last_loss;
  bool stop;
  {
    absl::MutexLock lock(&mu_);
    if (report.seconds() > 0) rates_[holder] = report.examples() / report.seconds();
    for (const auto& [reporter, r] : rates_) rate += r;
    if (loss.has_value()) last_loss_ = *loss;
    last_loss = last_loss_;
    stop = decision.has_value() || stop_requested_ || phase_ != JobPhase::kTraining;
    if (stop && IsJobWorker(*parts, report.task())) stop_heard_.insert(report.task().index());
    poked_ = true;
  }
  {
    // Two workers' reports may get here in the other order than their
    // steps were counted: what is published (the queue's step, the
    // summaries, the event) only moves forward, or a watcher would see
    // the step go back.
    absl::MutexLock lock(&progress_mu_);
    if (*step >= published_step_) {
      published_step_ = *step;
      CheckQueueWrite("progress", context_.jobs->RecordProgress(job_id_, *step, last_loss, rate));
      if (parts->train_summaries != nullptr && loss.has_value()) {
        parts->train_summaries->OnProgress(*step, last_loss, rate);
      }
      JobEvent event;
      ProgressEvent* progress = event.mutable_progress();
      progress->set_global_step(*step);
      progress->set_loss(last_loss);
      progress->set_examples_per_sec(rate);
      progress->set_epoch(parts->data->Stats().epoch);
      Publish(std::move(event));
    }
  }

  ProgressResponse response;
  response.set_global_step(*step);
  response.set_stop(stop);
  if (stop) {
    response.set_stop_reason(decision.has_value() ? decision->reason : STOP_REASON_USER);
  }
  return response;
}

absl::StatusOr<DataLease> JobRunner::AcquireDataLease(const TaskId& task, uint64_t incarnation) {
  ASSIGN_OR_RETURN(const std::shared_ptr<const JobParts> parts,
                   AdmitCall(JobCall::kAcquireDataLease));
  bool stopping = parts == nullptr || parts->data == nullptr;
  if (!stopping) {
    absl::MutexLock lock(&mu_);
    stopping = phase_ != JobPhase::kTraining || stop_requested_;
  }
  if (!stopping) stopping = parts->stop->decision().has_value();
  absl::StatusOr<DataLease> lease;
  if (stopping) {
    lease = DataLease();
    lease->set_end_of_data(true);
  } else {
    lease = DealsLeasesToSyncSlots(*parts)
                ? parts->data->AcquireForSlot(HolderName(task, incarnation), SyncSlotOf(task))
                : parts->data->Acquire(HolderName(task, incarnation));
    if (lease.ok() && lease->end_of_data()) CheckEndOfData(*parts, parts->step->value());
  }
  // A worker told there is no more data trains no further, but has not
  // heard the stop yet: the steps it trained since its last report are
  // applied on the shards and not yet in the global step. It reports them
  // next, and hears the stop in that answer; only then may the final
  // checkpoint be taken, or it would be saved under too small a step.
  return lease;
}

absl::Status JobRunner::CompleteDataLease(const CompleteDataLeaseRequest& request) {
  ASSIGN_OR_RETURN(const std::shared_ptr<const JobParts> parts,
                   AdmitCall(JobCall::kCompleteDataLease));
  if (parts == nullptr || parts->data == nullptr) {
    return absl::NotFoundError(absl::StrCat("job ", job_id_, " hands out no data leases"));
  }
  const std::string holder = HolderName(request.task(), request.incarnation());
  absl::Status status;
  if (request.outcome_unknown() && !DealsLeasesToSyncSlots(*parts)) {
    status = CompleteFromLedgers(*parts, holder, request.lease_id());
  } else {
    const std::vector<RecordRange> returned(request.returned().begin(), request.returned().end());
    status = parts->data->Complete(request.lease_id(), holder, returned);
  }
  if (status.ok() && parts->data->end_of_data()) {
    CheckEndOfData(*parts, parts->step->value());
    Poke();
  }
  return status;
}

void JobRunner::PublishSkipped(int64_t step, std::string why) {
  JobEvent event;
  event.mutable_eval()->set_checkpoint_step(step);
  event.mutable_eval()->set_skipped_reason(std::move(why));
  Publish(std::move(event));
}

absl::StatusOr<EvalReportResponse> JobRunner::ReportEval(const EvalReport& report) {
  ASSIGN_OR_RETURN(const std::shared_ptr<const JobParts> parts, AdmitCall(JobCall::kReportEval));
  EvalReportResponse response;
  switch (report.status()) {
    case EVAL_STATUS_MISSING_CHECKPOINT:
    case EVAL_STATUS_SKIPPED:
    case EVAL_STATUS_NO_NEW_CHECKPOINT:
    case EVAL_STATUS_FAILED:
      NoteNotEvaluated(report);
      return response;
    default:
      break;
  }
  {
    absl::MutexLock lock(&mu_);
    accounted_.insert(report.checkpoint_step());
  }
  const std::map<std::string, double> metrics(report.metrics().begin(), report.metrics().end());
  // Nothing was evaluated, or the job was stopped while starting.
  if (metrics.empty() || parts == nullptr) return response;
  absl::StatusOr<EvalOutcome> outcome = parts->stop->OnEval(report.checkpoint_step(), metrics);
  if (!outcome.ok()) return outcome.status();
  response.set_is_best(outcome->is_best);
  RecordEvaluation(report, metrics, *outcome);
  Poke();
  return response;
}

void JobRunner::NoteNotEvaluated(const EvalReport& report) {
  const std::string evaluator = TaskName(report.task());
  if (report.status() != EVAL_STATUS_NO_NEW_CHECKPOINT && report.status() != EVAL_STATUS_FAILED) {
    absl::MutexLock lock(&mu_);
    accounted_.insert(report.checkpoint_step());
  }
  switch (report.status()) {
    case EVAL_STATUS_MISSING_CHECKPOINT: {
      LOG(WARNING) << "job " << job_id_ << ": " << evaluator << " cannot evaluate ckpt-"
                   << report.checkpoint_step() << ": " << report.reason();
      {
        absl::MutexLock lock(&mu_);
        unevaluable_[report.checkpoint_step()] = report.reason();
        poked_ = true;
      }
      PublishSkipped(report.checkpoint_step(),
                     absl::StrCat("cannot be evaluated: ", report.reason()));
      return;
    }
    case EVAL_STATUS_SKIPPED: {
      LOG(INFO) << "job " << job_id_ << ": " << evaluator << " skipped ckpt-"
                << report.checkpoint_step() << ": " << report.reason();
      PublishSkipped(report.checkpoint_step(),
                     report.reason().empty() ? "skipped" : report.reason());
      return;
    }
    case EVAL_STATUS_NO_NEW_CHECKPOINT: {
      absl::MutexLock lock(&mu_);
      evaluator_done_ = absl::StrCat(evaluator, " found no new checkpoint after ckpt-",
                                     report.checkpoint_step(), ": ", report.reason());
      poked_ = true;
      return;
    }
    case EVAL_STATUS_FAILED: {
      LOG(ERROR) << "job " << job_id_ << ": " << evaluator
                 << " cannot evaluate it: " << report.reason();
      absl::MutexLock lock(&mu_);
      if (!failure_.has_value()) {
        failure_ = absl::FailedPreconditionError(
            absl::StrCat(evaluator, " cannot evaluate the job: ", report.reason()));
      }
      poked_ = true;
      return;
    }
    default:
      return;
  }
}

void JobRunner::RecordEvaluation(const EvalReport& report,
                                 const std::map<std::string, double>& metrics,
                                 const EvalOutcome& outcome) {
  bool final = report.final();
  for (const CheckpointInfo& info : feed_->List()) {
    if (info.step() == report.checkpoint_step()) final = final || info.final();
  }
  // The status first: the job may end as soon as it learns of this
  // evaluation, and must end with it in its status.
  {
    absl::MutexLock lock(&mu_);
    evaluations_[report.checkpoint_step()] = metrics;
  }
  if (context_.metrics != nullptr) {
    context_.metrics->RecordEvaluation(report.checkpoint_step(), metrics);
  }
  CheckQueueWrite("the evaluation", context_.jobs->UpdateStatus(job_id_, [&](JobStatus& status) {
    status.mutable_last_eval_metrics()->clear();
    status.mutable_last_eval_metrics()->insert(metrics.begin(), metrics.end());
    status.set_last_eval_step(report.checkpoint_step());
    if (outcome.is_best) status.set_best_checkpoint_step(report.checkpoint_step());
    if (!report.export_path().empty()) {
      status.set_export_path(report.export_path());
    } else if (!report.final_export_path().empty() && status.export_path().empty()) {
      status.set_export_path(report.final_export_path());
    }
  }));
  RefreshCheckpointsInStatus();
  LOG(INFO) << "job " << job_id_ << ": " << TaskName(report.task()) << " evaluated ckpt-"
            << report.checkpoint_step() << (outcome.is_best ? " (best so far)" : "")
            << (outcome.stop.has_value() ? absl::StrCat("; stop: ", outcome.stop->message)
                                         : std::string());

  JobEvent event;
  EvalEvent* eval = event.mutable_eval();
  eval->set_checkpoint_step(report.checkpoint_step());
  eval->mutable_metrics()->insert(metrics.begin(), metrics.end());
  eval->set_is_best(outcome.is_best);
  eval->set_final(final);
  Publish(std::move(event));
  if (spec_.mode() == JOB_MODE_CONTINUOUS_EVAL) {
    // The evaluator stops following a model_dir at its final checkpoint or
    // at max_steps; so does the job.
    const int64_t max_steps = spec_.stop().max_steps();
    absl::MutexLock lock(&mu_);
    if (final) {
      evaluator_done_ =
          absl::StrCat("evaluated the final checkpoint ckpt-", report.checkpoint_step());
    } else if (max_steps > 0 && report.checkpoint_step() >= max_steps) {
      evaluator_done_ = absl::StrCat("evaluated ckpt-", report.checkpoint_step(),
                                     ", at or past max_steps ", max_steps);
    }
  }
}

std::shared_ptr<StreamSource<CheckpointNotification>> JobRunner::WatchCheckpoints(
    const WatchCheckpointsRequest& request) {
  return std::make_shared<CheckpointWatch>(
      job_id_, HolderName(request.task(), request.incarnation()), request.after_step(), feed_,
      retention_, weak_from_this());
}

absl::Status JobRunner::ReleaseCheckpoint(const ReleaseCheckpointRequest& request) {
  if (request.step() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("step must be >= 0, got ", request.step()));
  }
  // Not held is fine: a retry after a lost response.
  retention_->Release(request.step(), HolderName(request.task(), request.incarnation()))
      .IgnoreError();
  // The job's loop applies max_to_keep again.
  Poke();
  return absl::OkStatus();
}

void JobRunner::MembersChanged() { Poke(); }

void JobRunner::HandBack(const TaskId& task, uint64_t incarnation, absl::string_view why) {
  std::shared_ptr<const JobParts> parts;
  {
    absl::MutexLock lock(&mu_);
    parts = parts_;
    rates_.erase(HolderName(task, incarnation));
  }
  const bool trains = parts != nullptr && parts->data != nullptr;
  JobLedgers ledgers;
  ledgers.checkpoints = retention_.get();
  int64_t before = 0;
  std::string trained;
  if (trains) {
    trained = HandBackTrainedRecords(*parts, HolderName(task, incarnation));
    ledgers.data = parts->data.get();
    ledgers.global_step = parts->step.get();
    before = parts->data->Stats().leases_outstanding;
  }
  const std::string handed = HandBackWork(task, incarnation, ledgers);
  LOG(INFO) << "job " << job_id_ << ": " << why << "; " << trained << handed;
  if (trains && context_.metrics != nullptr) {
    const int64_t requeued = before - parts->data->Stats().leases_outstanding;
    if (requeued > 0) context_.metrics->AddDataLeasesRequeued(requeued);
  }
  absl::MutexLock lock(&mu_);
  poked_ = true;
  if (parts == nullptr || phase_ == JobPhase::kEnded || shards_done_ ||
      task.type() != TASK_TYPE_PS || task.index() >= parts->num_ps || failure_.has_value()) {
    return;
  }
  const size_t shard = static_cast<size_t>(task.index());
  if (shard < shard_incarnations_.size() && shard_incarnations_[shard] != incarnation) {
    return;  // a process the job no longer runs on (its loss is dealt with)
  }
  const std::string lost = absl::StrCat(TaskName(task), " (a parameter server of the job) ", why);
  if (phase_ == JobPhase::kTraining || phase_ == JobPhase::kRollingBack) {
    if (!shard_lost_.has_value()) shard_lost_ = lost;
    return;
  }
  failure_ = absl::UnavailableError(
      absl::StrCat(lost, ": its part of the variables is gone; the job cannot go on without it"));
}

void JobRunner::RequestStop(bool immediately) {
  absl::MutexLock lock(&mu_);
  stop_requested_ = true;
  immediately_ = immediately_ || immediately;
}

void JobRunner::Abort(std::string why) {
  std::shared_ptr<ShardGroup> shards;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_reason_.has_value()) abort_reason_ = std::move(why);
    shards = shards_;
  }
  // Shards connected later are cancelled as they connect (ConnectShards).
  if (shards != nullptr) shards->CancelAll();
}

void JobRunner::Tick() {
  const std::shared_ptr<const JobParts> parts = StartedParts();
  if (parts == nullptr || parts->data == nullptr) return;
  const std::vector<DataLease> expired = parts->data->ExpireLeases();
  if (!expired.empty()) {
    LOG(WARNING) << "job " << job_id_ << ": " << expired.size()
                 << " data leases expired; their records go back to the queue";
    if (context_.metrics != nullptr) context_.metrics->AddDataLeasesRequeued(expired.size());
  }
  if (context_.metrics != nullptr) {
    context_.metrics->SetTraining(parts->step->value(), examples_per_sec());
    context_.metrics->SetDataLeasesOutstanding(parts->data->Stats().leases_outstanding);
  }
}

int64_t JobRunner::global_step() const {
  const std::shared_ptr<const JobParts> parts = StartedParts();
  return parts != nullptr && parts->step != nullptr ? parts->step->value() : 0;
}

double JobRunner::examples_per_sec() const {
  absl::MutexLock lock(&mu_);
  double rate = 0;
  for (const auto& [reporter, r] : rates_) rate += r;
  return rate;
}

int64_t JobRunner::leases_outstanding() const {
  const std::shared_ptr<const JobParts> parts = StartedParts();
  return parts != nullptr && parts->data != nullptr ? parts->data->Stats().leases_outstanding : 0;
}

}  // namespace coordinator
}  // namespace pstrain
