#include "server/coordinator/coordinator.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/config/job_spec.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "server/coordinator/job_paths.h"
#include "server/coordinator/job_state.h"
#include "server/coordinator/start_point.h"
#include "server/coordinator/summary_events.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

// WatchJob: the job's status first, then the events of its log (progress
// only when asked for) until the log is closed.
class JobWatch final : public StreamSource<JobEvent> {
 public:
  JobWatch(JobEvent first, std::shared_ptr<internal::EventLog<JobEvent>> log, uint64_t cursor,
           bool include_progress)
      : first_(std::move(first)),
        log_(std::move(log)),
        cursor_(cursor),
        include_progress_(include_progress) {}

  Next Poll(std::function<void()> wake) override {
    Next next;
    if (!sent_first_) {
      sent_first_ = true;
      next.messages.push_back(first_);
      if (log_ == nullptr) next.end = absl::OkStatus();  // the job had ended
      return next;
    }
    for (;;) {
      internal::EventLog<JobEvent>::Read read = log_->ReadOrWait(cursor_, 64, wake);
      cursor_ = read.next;
      for (JobEvent& event : read.events) {
        if (event.has_progress() && !include_progress_) continue;
        next.messages.push_back(std::move(event));
      }
      if (read.closed) next.end = absl::OkStatus();
      next.wait_id = read.wait_id;
      if (next.messages.empty() && !next.end.has_value() && next.wait_id == 0) continue;
      return next;
    }
  }

  void CancelWait(uint64_t wait_id) override {
    if (log_ != nullptr) log_->CancelWait(wait_id);
  }

 private:
  const JobEvent first_;
  const std::shared_ptr<internal::EventLog<JobEvent>> log_;
  uint64_t cursor_;
  const bool include_progress_;
  bool sent_first_ = false;
};

// WatchCheckpoints while the coordinator may stop with the job left to
// resume: a stream that ends because of that stop ends Unavailable, so the
// evaluator opens it again with the next coordinator; an OK end would tell
// it the job's checkpoints are over.
class ResumableCheckpointWatch final : public StreamSource<CheckpointNotification> {
 public:
  ResumableCheckpointWatch(std::shared_ptr<StreamSource<CheckpointNotification>> source,
                           std::shared_ptr<std::atomic<bool>> left_to_resume)
      : source_(std::move(source)), left_to_resume_(std::move(left_to_resume)) {}

  Next Poll(std::function<void()> wake) override {
    Next next = source_->Poll(std::move(wake));
    if (next.end.has_value() && next.end->ok() && left_to_resume_->load()) {
      next.end = WithReason(
          absl::UnavailableError(
              "the coordinator is stopping; the job resumes when it is back: watch again"),
          ERROR_REASON_COORDINATOR_STOPPING);
    }
    return next;
  }
  void CancelWait(uint64_t wait_id) override { source_->CancelWait(wait_id); }
  void Close() override { source_->Close(); }

 private:
  const std::shared_ptr<StreamSource<CheckpointNotification>> source_;
  const std::shared_ptr<std::atomic<bool>> left_to_resume_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Coordinator>> Coordinator::Create(
    Clock& clock, Env& env, JobPlanner& planner, ShardClientFactory shard_clients,
    CoordinatorMetrics* metrics, CoordinatorOptions options,
    std::function<void(int exit_code)> on_shutdown) {
  if (!options.checkpoint_root.empty() && options.checkpoint_root.front() != '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "the checkpoint root must be an absolute folder, got '", options.checkpoint_root, "'"));
  }
  // A cluster told to wait for more workers than the registry's bound on
  // task indices, or to take ranks beyond it, must be able to register
  // them: otherwise worker/<bound> and up are refused as malformed and a
  // job waiting for all of them starts with the first <bound> alone.
  options.membership.max_task_index = std::max(
      {options.membership.max_task_index, options.runner.num_workers, options.runner.max_workers});
  ASSIGN_OR_RETURN(std::unique_ptr<MembershipRegistry> members,
                   MembershipRegistry::Create(clock, options.membership));
  ASSIGN_OR_RETURN(std::unique_ptr<JobQueue> jobs, JobQueue::Create(clock, options.queue));
  std::unique_ptr<JobJournal> journal;
  JournalContents recorded;
  if (!options.state_dir.empty()) {
    ASSIGN_OR_RETURN(journal, JobJournal::Open(env, options.state_dir, options.journal));
    ASSIGN_OR_RETURN(recorded, journal->Load());
  }
  std::unique_ptr<Coordinator> coordinator(
      new Coordinator(clock, env, planner, std::move(shard_clients), metrics, std::move(options),
                      std::move(members), std::move(jobs), std::move(journal),
                      std::move(on_shutdown)));
  coordinator->RecoverJobs(recorded);
  return coordinator;
}

Coordinator::Coordinator(Clock& clock, Env& env, JobPlanner& planner,
                         ShardClientFactory shard_clients, CoordinatorMetrics* metrics,
                         CoordinatorOptions options, std::unique_ptr<MembershipRegistry> members,
                         std::unique_ptr<JobQueue> jobs, std::unique_ptr<JobJournal> journal,
                         std::function<void(int)> on_shutdown)
    : clock_(clock),
      env_(env),
      planner_(planner),
      shard_clients_(std::move(shard_clients)),
      metrics_(metrics),
      options_(std::move(options)),
      members_(std::move(members)),
      jobs_(std::move(jobs)),
      journal_(std::move(journal)),
      on_shutdown_(std::move(on_shutdown)),
      assignments_(clock) {}

Coordinator::~Coordinator() { Stop(); }

void Coordinator::Start() {
  absl::MutexLock lock(&mu_);
  if (started_ || stopping_) return;
  started_ = true;
  scheduler_ = std::thread([this] { SchedulerLoop(); });
  ticker_ = std::thread([this] { TickerLoop(); });
}

void Coordinator::Stop() {
  std::shared_ptr<JobRunner> runner;
  std::map<std::string, std::shared_ptr<JobLog>, std::less<>> logs;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && !scheduler_.joinable() && !ticker_.joinable()) return;
    stopping_ = true;
    left_to_resume_->store(LeavingJobToResume());
    runner = runner_;
  }
  if (runner != nullptr) runner->Abort("the coordinator shut down while the job ran");
  if (scheduler_.joinable()) scheduler_.join();
  if (ticker_.joinable()) ticker_.join();
  assignments_.CancelAll();
  {
    absl::MutexLock lock(&mu_);
    logs.swap(logs_);
  }
  for (auto& [job_id, log] : logs) log->Close();
}

std::shared_ptr<JobRunner> Coordinator::running() const {
  absl::MutexLock lock(&mu_);
  return runner_;
}

// ------------------------------------------------------------- threads --

void Coordinator::SchedulerLoop() {
  for (;;) {
    std::shared_ptr<JobRunner> runner;
    JobStatus started;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || shutdown_requested_ || jobs_pending_;
      };
      mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      if (shutdown_requested_) break;
      jobs_pending_ = false;
      // Under mu_, so RunnerFor never sees a RUNNING job without its runner.
      absl::StatusOr<JobStatus> job = jobs_->StartNext();
      if (!job.ok()) continue;  // nothing queued
      JobRunnerContext context;
      context.clock = &clock_;
      context.env = &env_;
      context.members = members_.get();
      context.jobs = jobs_.get();
      context.assignments = &assignments_;
      context.planner = &planner_;
      context.shard_clients = shard_clients_;
      context.metrics = metrics_;
      auto log = logs_.find(job->job_id());
      if (log != logs_.end()) {
        std::shared_ptr<JobLog> job_log = log->second;
        context.publish = [this, job_log, job_id = job->job_id()](JobEvent event) {
          AppendEvent(*job_log, job_id, std::move(event));
        };
      }
      context.record = [this](const JobStatus& job) { JournalRunning(job); };
      runner = std::make_shared<JobRunner>(*job, options_.runner, std::move(context));
      runner_ = runner;
      started = *std::move(job);
    }
    JournalRunning(started);
    runner->Run();
    {
      absl::MutexLock lock(&mu_);
      runner_.reset();
      jobs_pending_ = true;  // the next queued job, if any
    }
    JournalEnd(runner->job_id());
    CloseLog(runner->job_id());
  }

  // Shutdown: once no job runs, members learn it from their heartbeats;
  // then the process is told to exit.
  int exit_code = 0;
  {
    absl::MutexLock lock(&mu_);
    exit_code = members_exit_code_;
    LOG(INFO) << "shutting down: telling every member to exit"
              << (exit_code != 0 ? absl::StrCat(" with exit code ", exit_code) : "");
    members_told_to_exit_ = true;
    clock_.AwaitWithDeadline(&mu_, absl::Condition(&stopping_),
                             clock_.Now() + options_.shutdown_notice);
    if (stopping_) return;
  }
  if (on_shutdown_) on_shutdown_(exit_code);
}

void Coordinator::TickerLoop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    clock_.AwaitWithDeadline(&mu_, absl::Condition(&stopping_), clock_.Now() + options_.tick);
    if (stopping_) break;
    mu_.Unlock();
    Tick();
    mu_.Lock();
  }
}

void Coordinator::Tick() {
  const std::shared_ptr<JobRunner> runner = running();
  const std::vector<Member> lost = members_->CheckDeadlines();
  for (const Member& member : lost) {
    const std::string why = absl::StrCat(
        "was lost: no heartbeat for ", FormatWaitAge(members_->options().heartbeat_timeout),
        " (last from ", member.address().empty() ? "a process" : member.address(), ")");
    LOG(WARNING) << TaskName(member.task()) << " " << why;
    if (runner != nullptr) runner->HandBack(member.task(), member.incarnation(), why);
  }
  assignments_.Expire();
  if (runner != nullptr) runner->Tick();
  if (metrics_ != nullptr) {
    if (!lost.empty()) metrics_->AddLostMembers(static_cast<int>(lost.size()));
    metrics_->SetMembers(members_->Members(), clock_.Now());
    metrics_->ObserveGlobalStep(
        runner != nullptr ? std::optional<int64_t>(runner->global_step()) : std::nullopt,
        clock_.Now());
    metrics_->SetJobCounts(jobs_->CountByState());
    metrics_->SetQueuedJobs(jobs_->queued_count());
  }
}

// ------------------------------------------------------------- helpers --

absl::StatusOr<std::shared_ptr<JobRunner>> Coordinator::RunnerFor(absl::string_view job_id) const {
  {
    absl::MutexLock lock(&mu_);
    if (LeavingJobToResume()) {
      // Not "not running": a member told so would leave the job for good.
      return WithReason(absl::UnavailableError(absl::StrCat(
                            "the coordinator is stopping; job ", job_id,
                            " resumes when it is back, from its newest checkpoint: try again")),
                        ERROR_REASON_COORDINATOR_STOPPING);
    }
    if (runner_ != nullptr && runner_->job_id() == job_id) return runner_;
  }
  absl::StatusOr<JobStatus> job = jobs_->Get(job_id);
  if (!job.ok()) {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "no job '", job_id,
                          "' runs here (the coordinator may have restarted); ask for a new "
                          "assignment")),
                      ERROR_REASON_JOB_ENDED);
  }
  if (job->state() == JOB_STATE_QUEUED) {
    return WithReason(
        absl::FailedPreconditionError(absl::StrCat("job ", job_id, " has not started yet")),
        ERROR_REASON_JOB_NOT_STARTED);
  }
  return WithReason(absl::FailedPreconditionError(absl::StrCat(
                        "job ", job_id, " is ", JobStateName(job->state()), ", not running; stop")),
                    ERROR_REASON_JOB_ENDED);
}

void Coordinator::PublishStatus(absl::string_view job_id) {
  absl::StatusOr<JobStatus> status = jobs_->Get(job_id);
  if (!status.ok()) return;
  std::shared_ptr<JobLog> log;
  {
    absl::MutexLock lock(&mu_);
    auto it = logs_.find(job_id);
    if (it == logs_.end()) return;
    log = it->second;
  }
  JobEvent event;
  event.set_unix_ms(absl::ToUnixMillis(clock_.Now()));
  *event.mutable_status() = *std::move(status);
  AppendEvent(*log, job_id, std::move(event));
}

void Coordinator::AppendEvent(JobLog& log, absl::string_view job_id, JobEvent event) {
  history_.Append(job_id, event);
  log.Append(std::move(event));
}

absl::StatusOr<JobHistory::Read> Coordinator::JobEvents(absl::string_view job_id, uint64_t after) {
  ASSIGN_OR_RETURN(JobStatus job, jobs_->Get(job_id));
  if (!history_.Holds(job_id)) {
    // None of its events are here (it ran before this coordinator started,
    // or was forgotten since): its curves from what its summaries wrote,
    // then its status.
    std::vector<JobEvent> events = EventsFromSummaries(env_, job.spec().checkpoint().model_dir());
    JobEvent status;
    status.set_unix_ms(job.end_unix_ms() > 0 ? job.end_unix_ms()
                                             : absl::ToUnixMillis(clock_.Now()));
    *status.mutable_status() = std::move(job);
    events.push_back(std::move(status));
    history_.Seed(job_id, events);
  }
  return history_.After(job_id, after);
}

void Coordinator::CloseLog(absl::string_view job_id) {
  std::shared_ptr<JobLog> log;
  {
    absl::MutexLock lock(&mu_);
    auto it = logs_.find(job_id);
    if (it == logs_.end()) return;
    log = it->second;
    logs_.erase(it);
  }
  // The final status may already be in the log (the runner publishes its
  // end); a watcher then sees it twice, which is harmless.
  if (absl::StatusOr<JobStatus> status = jobs_->Get(job_id); status.ok()) {
    JobEvent event;
    event.set_unix_ms(absl::ToUnixMillis(clock_.Now()));
    *event.mutable_status() = *std::move(status);
    AppendEvent(*log, job_id, std::move(event));
  }
  log->Close();
}

absl::StatusOr<JobSpec> Coordinator::ConfinePaths(JobSpec spec) const {
  return ConfineJobPaths(env_, options_.checkpoint_root, std::move(spec));
}

// ------------------------------------------------------------ journal --

void Coordinator::RecoverJobs(const JournalContents& contents) {
  if (journal_ == nullptr) return;
  jobs_->ReserveNumbersThrough(contents.last_job_number);
  auto was_active = [](const JobStatus& job) {
    return job.state() == JOB_STATE_RUNNING || job.state() == JOB_STATE_FINISHING;
  };
  // The job that was running first: its members and shards wait for it.
  std::vector<const JobStatus*> order;
  for (const JobStatus& job : contents.jobs) {
    if (was_active(job)) order.push_back(&job);
  }
  for (const JobStatus& job : contents.jobs) {
    if (!was_active(job)) order.push_back(&job);
  }
  int resumed = 0, queued = 0, ended = 0;
  for (const JobStatus* job : order) {
    const std::string& model_dir = job->spec().checkpoint().model_dir();
    const std::string reason =
        was_active(*job) ? absl::StrCat("the coordinator restarted while the job was ",
                                        JobStateName(job->state()),
                                        "; resuming it from its model_dir ", model_dir)
                         : "queued again after a coordinator restart";
    absl::StatusOr<JobStatus> recovered = jobs_->Recover(*job, reason);
    if (!recovered.ok()) {
      LOG(ERROR) << "journal: cannot take back job " << job->job_id() << " from "
                 << journal_->RecordPath(job->job_id()) << ": " << recovered.status();
      continue;
    }
    if (IsEnded(job->state())) {
      ++ended;
      continue;
    }
    if (was_active(*job)) {
      ++resumed;
      LOG(INFO) << "found job " << job->job_id() << " (" << JobStateName(job->state())
                << " when the coordinator stopped): resuming it from its model_dir " << model_dir;
    } else {
      ++queued;
      LOG(INFO) << "found job " << job->job_id()
                << " (QUEUED when the coordinator stopped): queued again in its place";
    }
    // The curves of its run so far, for the console.
    if (was_active(*job)) history_.Seed(job->job_id(), EventsFromSummaries(env_, model_dir));
    auto log = std::make_shared<JobLog>(options_.job_events);
    JobEvent event;
    event.set_unix_ms(absl::ToUnixMillis(clock_.Now()));
    *event.mutable_status() = *std::move(recovered);
    AppendEvent(*log, job->job_id(), std::move(event));
    absl::MutexLock lock(&mu_);
    logs_[job->job_id()] = std::move(log);
    if (was_active(*job)) resuming_.insert(job->job_id());
    jobs_pending_ = true;
  }
  LOG(INFO) << "journal " << journal_->dir() << ": " << resumed << " job(s) to resume, " << queued
            << " queued, " << ended << " ended kept for status; job ids continue after "
            << contents.last_job_number
            << (contents.set_aside.empty()
                    ? ""
                    : absl::StrCat("; ", contents.set_aside.size(), " damaged file(s) set aside"));
}

bool Coordinator::LeavingJobToResume() const {
  return stopping_ && !shutdown_requested_ && journal_ != nullptr &&
         options_.resume_running_job_after_stop;
}

void Coordinator::JournalRunning(const JobStatus& job) {
  if (journal_ == nullptr) return;
  if (absl::Status recorded = journal_->Record(job); !recorded.ok()) {
    // Its older record stays: a restart would still resume it.
    LOG(ERROR) << "job " << job.job_id() << ": cannot record its status in "
               << journal_->dir() << ": " << recorded;
  }
}

void Coordinator::JournalEnd(absl::string_view job_id) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = resuming_.find(job_id); it != resuming_.end()) resuming_.erase(it);
  }
  if (journal_ == nullptr) return;
  absl::StatusOr<JobStatus> job = jobs_->Get(job_id);
  if (!job.ok() || !IsEnded(job->state())) return;
  bool interrupted_by_stop = false;
  {
    absl::MutexLock lock(&mu_);
    interrupted_by_stop = LeavingJobToResume() && job->state() == JOB_STATE_FAILED &&
                          job->start_unix_ms() != 0;
  }
  if (interrupted_by_stop) {
    LOG(INFO) << "job " << job_id << " stays recorded as running in " << journal_->dir()
              << ": the coordinator stops, and the next one resumes it from its model_dir";
    return;
  }
  if (absl::Status recorded = journal_->RecordEnd(*job); !recorded.ok()) {
    LOG(ERROR) << "job " << job_id << ": cannot record its end in " << journal_->dir() << ": "
               << recorded << "; a restarted coordinator would run it again";
  }
}

// ----------------------------------------------------------- the calls --

absl::StatusOr<RegisterResponse> Coordinator::Register(const RegisterRequest& request) {
  ASSIGN_OR_RETURN(RegisterResult result,
                   members_->Register(request.task(), request.incarnation(), request.address(),
                                      request.metrics_address()));
  const std::shared_ptr<JobRunner> runner = running();
  if (result.replaced_incarnation != 0) {
    const std::string why = absl::StrCat("restarted (incarnation ", request.incarnation(),
                                         " replaced ", result.replaced_incarnation, ")");
    LOG(INFO) << TaskName(request.task()) << " " << why;
    if (runner != nullptr) runner->HandBack(request.task(), result.replaced_incarnation, why);
  } else {
    VLOG(1) << TaskName(request.task()) << " registered (incarnation " << request.incarnation()
            << ")";
  }
  if (runner != nullptr) runner->MemberRegistered(request.task());
  RegisterResponse response;
  response.set_heartbeat_interval_ms(
      absl::ToInt64Milliseconds(members_->options().heartbeat_interval));
  response.set_heartbeat_timeout_ms(
      absl::ToInt64Milliseconds(members_->options().heartbeat_timeout));
  return response;
}

absl::StatusOr<HeartbeatResponse> Coordinator::Heartbeat(const HeartbeatRequest& request) {
  MemberReport report;
  report.step = request.step();
  report.health = request.health();
  report.health_detail = request.health_detail();
  report.queue_depth = request.queue_depth();
  RETURN_IF_ERROR(members_->Heartbeat(request.task(), request.incarnation(), report));
  HeartbeatResponse response;
  // Not Get: a copy of the spec and placements per heartbeat grows with the
  // model, for the job id alone.
  AssignmentBoard::AssignedJob assignment = assignments_.JobOf(request.task());
  response.set_job_id(std::move(assignment.job_id));
  if (assignment.replica_epoch > 0) {
    response.set_replica_epoch(assignment.replica_epoch);
    for (std::string& address : assignment.ps_addresses) {
      response.add_ps_addresses(std::move(address));
    }
  }
  absl::MutexLock lock(&mu_);
  if (response.job_id().empty() &&
      (resuming_.count(request.job_id()) > 0 || LeavingJobToResume())) {
    // The job resumes and has not handed out its assignments yet, or will
    // resume with the next coordinator.
    response.set_job_id(request.job_id());
  }
  response.set_shutdown(members_told_to_exit_);
  if (members_told_to_exit_) response.set_exit_code(members_exit_code_);
  return response;
}

absl::Status Coordinator::Leave(const LeaveRequest& request) {
  RETURN_IF_ERROR(members_->Leave(request.task(), request.incarnation()));
  const std::string why = absl::StrCat(
      TaskName(request.task()), " left the cluster (",
      request.reason().empty() ? "no reason given" : request.reason().substr(0, 200), ")");
  LOG(INFO) << why;
  if (const std::shared_ptr<JobRunner> runner = running(); runner != nullptr) {
    runner->HandBack(request.task(), request.incarnation(), why);
    runner->MembersChanged();
  }
  return absl::OkStatus();
}

absl::Status Coordinator::CheckCaller(const TaskId& task, uint64_t incarnation) const {
  return members_->CheckCaller(task, incarnation);
}

absl::Time Coordinator::AssignmentDeadline(int64_t wait_ms) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::InfinitePast();
  }
  const absl::Duration wait =
      std::min(absl::Milliseconds(std::max<int64_t>(wait_ms, 0)), options_.max_assignment_wait);
  return clock_.Now() + wait;
}

void Coordinator::AssignmentDelivered(const TaskId& task, uint64_t incarnation,
                                      const Assignment& assignment) {
  if (assignment.job_id().empty()) return;
  members_->SetJob(task, incarnation, assignment.job_id()).IgnoreError();
}

absl::StatusOr<ProgressResponse> Coordinator::ReportProgress(const ProgressReport& report) {
  RETURN_IF_ERROR(CheckCaller(report.task(), report.incarnation()));
  ASSIGN_OR_RETURN(std::shared_ptr<JobRunner> runner, RunnerFor(report.job_id()));
  return runner->ReportProgress(report);
}

absl::StatusOr<DataLease> Coordinator::AcquireDataLease(const AcquireDataLeaseRequest& request) {
  RETURN_IF_ERROR(CheckCaller(request.task(), request.incarnation()));
  ASSIGN_OR_RETURN(std::shared_ptr<JobRunner> runner, RunnerFor(request.job_id()));
  return runner->AcquireDataLease(request.task(), request.incarnation());
}

absl::Status Coordinator::CompleteDataLease(const CompleteDataLeaseRequest& request) {
  RETURN_IF_ERROR(CheckCaller(request.task(), request.incarnation()));
  ASSIGN_OR_RETURN(std::shared_ptr<JobRunner> runner, RunnerFor(request.job_id()));
  return runner->CompleteDataLease(request);
}

absl::StatusOr<EvalReportResponse> Coordinator::ReportEval(const EvalReport& report) {
  RETURN_IF_ERROR(CheckCaller(report.task(), report.incarnation()));
  ASSIGN_OR_RETURN(std::shared_ptr<JobRunner> runner, RunnerFor(report.job_id()));
  return runner->ReportEval(report);
}

absl::StatusOr<std::shared_ptr<StreamSource<CheckpointNotification>>> Coordinator::WatchCheckpoints(
    const WatchCheckpointsRequest& request) {
  RETURN_IF_ERROR(CheckCaller(request.task(), request.incarnation()));
  ASSIGN_OR_RETURN(std::shared_ptr<JobRunner> runner, RunnerFor(request.job_id()));
  return std::shared_ptr<StreamSource<CheckpointNotification>>(
      std::make_shared<ResumableCheckpointWatch>(runner->WatchCheckpoints(request),
                                                 left_to_resume_));
}

absl::Status Coordinator::ReleaseCheckpoint(const ReleaseCheckpointRequest& request) {
  RETURN_IF_ERROR(CheckCaller(request.task(), request.incarnation()));
  ASSIGN_OR_RETURN(std::shared_ptr<JobRunner> runner, RunnerFor(request.job_id()));
  return runner->ReleaseCheckpoint(request);
}

void Coordinator::JoinRound(const JoinRoundRequest& request, RoundKeeper::JoinDone done) {
  if (absl::Status caller = CheckCaller(request.task(), request.incarnation()); !caller.ok()) {
    return done(caller);
  }
  absl::StatusOr<std::shared_ptr<JobRunner>> runner = RunnerFor(request.job_id());
  if (!runner.ok()) return done(runner.status());
  (*runner)->JoinRound(request, std::move(done));
}

// Queuing, recording and opening the event log are one step under mu_,
// because the scheduler takes jobs under mu_: otherwise a job submitted as
// the previous one ends could start before it is recorded (a restart would
// queue it again) or before its log exists (its progress would reach no
// watcher). The cost is one journal write while other calls wait, once per
// submit.
absl::StatusOr<JobStatus> Coordinator::Enqueue(JobSpec spec, const std::string& request_id,
                                               bool* existing) {
  // Admission looks for the data files: not under mu_.
  ASSIGN_OR_RETURN(JobSpec admitted, jobs_->Admit(std::move(spec)));
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(TakingJobs());
  // Under mu_ with the Enqueue below: of two submits with one request id,
  // the second finds the first's job.
  ASSIGN_OR_RETURN(std::optional<JobStatus> known, jobs_->FindSubmitted(request_id, admitted));
  *existing = known.has_value();
  if (known.has_value()) return *std::move(known);
  ASSIGN_OR_RETURN(JobStatus status, jobs_->Enqueue(std::move(admitted), request_id));
  if (journal_ != nullptr) {
    // A job that would not survive a restart is not taken.
    if (absl::Status recorded = journal_->Record(status); !recorded.ok()) {
      jobs_->Withdraw(status.job_id()).IgnoreError();
      LOG(ERROR) << "job " << status.job_id() << " refused: cannot record it in "
                 << journal_->dir() << ": " << recorded;
      return absl::Status(recorded.code(),
                          absl::StrCat("the coordinator cannot record the job in its state folder ",
                                       journal_->dir(), " (--state_dir): ", recorded.message(),
                                       "; the job was not queued"));
    }
  }
  auto log = std::make_shared<JobLog>(options_.job_events);
  JobEvent event;
  event.set_unix_ms(absl::ToUnixMillis(clock_.Now()));
  *event.mutable_status() = status;
  AppendEvent(*log, status.job_id(), std::move(event));
  logs_[status.job_id()] = std::move(log);
  jobs_pending_ = true;
  return status;
}

absl::Status Coordinator::TakingJobs() const {
  if (stopping_ || shutdown_requested_) {
    return absl::UnavailableError("the coordinator is shutting down; it takes no new jobs");
  }
  return absl::OkStatus();
}

absl::StatusOr<SubmitJobResponse> Coordinator::SubmitJob(const SubmitJobRequest& request) {
  {
    // Said first, whatever the spec: submitting again elsewhere is the fix.
    absl::MutexLock lock(&mu_);
    RETURN_IF_ERROR(TakingJobs());
  }
  RETURN_IF_ERROR(ValidateRequestId(request.request_id()));
  // Relative paths become absolute before defaults derive others from them.
  ASSIGN_OR_RETURN(JobSpec confined, ConfinePaths(request.spec()));
  ASSIGN_OR_RETURN(JobSpec prepared, PrepareJobSpec(std::move(confined)));
  ASSIGN_OR_RETURN(prepared, ConfinePaths(std::move(prepared)));
  // A retry of a submit answers with its job, whatever happened since.
  if (!jobs_->KnowsRequest(request.request_id())) {
    RETURN_IF_ERROR(CheckRunNotFinished(env_, prepared));
    // What a submit can tell of the data without reading it; reading it is
    // the job's first phase, so that the submit answers at once.
    RETURN_IF_ERROR(CheckDataFilesExist(prepared));
  }
  SubmitJobResponse response;
  if (request.validate_only()) {
    // A dry run checks what the job's start would: the plan reads the data
    // and builds the model, which a submit leaves to the job.
    ASSIGN_OR_RETURN(JobSpec admitted, jobs_->Admit(std::move(prepared)));
    if (absl::StatusOr<JobPlan> plan = planner_.Plan(admitted); !plan.ok()) {
      return absl::Status(plan.status().code(),
                          absl::StrCat("cannot set up the job: ", plan.status().message()));
    }
    *response.mutable_status()->mutable_spec() = std::move(admitted);
    return response;
  }
  bool existing = false;
  ASSIGN_OR_RETURN(JobStatus status, Enqueue(std::move(prepared), request.request_id(), &existing));
  if (existing) {
    LOG(INFO) << "job " << status.job_id() << ": submitted again (request id "
              << request.request_id() << "); nothing queued";
  } else {
    LOG(INFO) << "job " << status.job_id() << " queued";
  }
  response.set_job_id(status.job_id());
  response.set_already_submitted(existing);
  *response.mutable_status() = std::move(status);
  return response;
}

absl::StatusOr<JobStatus> Coordinator::GetJob(absl::string_view job_id) const {
  return jobs_->Get(job_id);
}

absl::StatusOr<ListJobsResponse> Coordinator::ListJobs(const ListJobsRequest& request) const {
  std::vector<JobState> states;
  for (int state : request.states()) states.push_back(static_cast<JobState>(state));
  ASSIGN_OR_RETURN(std::vector<JobStatus> jobs, jobs_->List(states, request.limit()));
  ListJobsResponse response;
  for (JobStatus& job : jobs) *response.add_jobs() = std::move(job);
  return response;
}

absl::StatusOr<StopJobResponse> Coordinator::StopJob(const StopJobRequest& request) {
  ASSIGN_OR_RETURN(JobStatus status, jobs_->Stop(request.job_id()));
  if (status.state() == JOB_STATE_STOPPED && status.start_unix_ms() == 0) {
    LOG(INFO) << "job " << status.job_id() << " stopped before it started";
    JournalEnd(status.job_id());
    CloseLog(status.job_id());
  } else if (!IsEnded(status.state())) {
    if (std::shared_ptr<JobRunner> runner = running();
        runner != nullptr && runner->job_id() == status.job_id()) {
      LOG(INFO) << "job " << status.job_id() << ": stop requested"
                << (request.immediately() ? " (immediately)" : "");
      runner->RequestStop(request.immediately() ? StopMode::kImmediately : StopMode::kGraceful);
    }
    PublishStatus(status.job_id());
  }
  StopJobResponse response;
  *response.mutable_status() = std::move(status);
  return response;
}

absl::StatusOr<std::shared_ptr<StreamSource<JobEvent>>> Coordinator::WatchJob(
    const WatchJobRequest& request) {
  std::shared_ptr<JobLog> log;
  uint64_t cursor = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = logs_.find(request.job_id());
    if (it != logs_.end()) {
      log = it->second;
      cursor = log->end();
    }
  }
  ASSIGN_OR_RETURN(JobStatus status, jobs_->Get(request.job_id()));
  JobEvent first;
  first.set_unix_ms(absl::ToUnixMillis(clock_.Now()));
  *first.mutable_status() = std::move(status);
  return std::shared_ptr<StreamSource<JobEvent>>(std::make_shared<JobWatch>(
      std::move(first), std::move(log), cursor, request.include_progress()));
}

ClusterStatus Coordinator::GetCluster() const {
  ClusterStatus status;
  *status.mutable_spec() = options_.cluster;
  for (Member& member : members_->Members()) *status.add_members() = std::move(member);
  if (std::optional<std::string> running = jobs_->active_job_id()) {
    status.set_running_job_id(*running);
  }
  status.set_queued_jobs(jobs_->queued_count());
  return status;
}

absl::StatusOr<ExportModelResponse> Coordinator::ExportModel(
    const ExportModelRequest& request) const {
  ASSIGN_OR_RETURN(JobStatus job, jobs_->Get(request.job_id()));
  if (request.step() != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "exporting a chosen checkpoint (step ", request.step(),
        ") on demand is not offered; the evaluator exports the best checkpoint and the final "
        "one under ",
        job.spec().export_().export_dir()));
  }
  if (job.export_path().empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job.job_id(), " has no export yet; the evaluator exports as it evaluates (",
        job.checkpoints_size(), " checkpoints so far)"));
  }
  ExportModelResponse response;
  response.set_path(job.export_path());
  response.set_step(job.best_checkpoint_step() > 0 ? job.best_checkpoint_step()
                                                   : job.last_eval_step());
  return response;
}

absl::Status Coordinator::Shutdown(const ShutdownRequest& request, int exit_code) {
  std::optional<std::string> active = jobs_->active_job_id();
  if (active.has_value() && !request.stop_running_job()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", *active, " is running; stop it first, or ask to stop it (stop_running_job)"));
  }
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError("the coordinator is already stopping");
    shutdown_requested_ = true;
    members_exit_code_ = exit_code;
  }
  LOG(INFO) << "shutdown requested" << (active.has_value() ? "; stopping job " + *active : "");
  if (active.has_value()) {
    StopJobRequest stop;
    stop.set_job_id(*active);
    StopJob(stop).IgnoreError();
  }
  // A shutdown ends the queue too, or the next coordinator on this state
  // folder would run jobs nobody waits for any more.
  absl::StatusOr<std::vector<JobStatus>> queued =
      jobs_->List({JOB_STATE_QUEUED}, std::numeric_limits<int>::max());
  for (const JobStatus& job : queued.value_or(std::vector<JobStatus>())) {
    StopJobRequest stop;
    stop.set_job_id(job.job_id());
    StopJob(stop).IgnoreError();
  }
  return absl::OkStatus();
}

}  // namespace coordinator
}  // namespace pstrain
