#ifndef PSTRAIN_SERVER_COORDINATOR_COORDINATOR_H_
#define PSTRAIN_SERVER_COORDINATOR_COORDINATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/checkpoint/env.h"
#include "common/clock/clock.h"
#include "protos/cluster.pb.h"
#include "protos/coordinator.pb.h"
#include "server/coordinator/assignment_board.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/internal/event_log.h"
#include "server/coordinator/job_history.h"
#include "server/coordinator/job_journal.h"
#include "server/coordinator/job_planner.h"
#include "server/coordinator/job_queue.h"
#include "server/coordinator/job_runner.h"
#include "server/coordinator/membership_registry.h"
#include "server/coordinator/round_keeper.h"
#include "server/coordinator/shard_client.h"
#include "server/coordinator/stream_source.h"

namespace pstrain {
namespace coordinator {

struct CoordinatorOptions {
  MembershipOptions membership;
  JobQueueOptions queue;
  JobRunnerOptions runner;
  // How often heartbeat deadlines, long-poll deadlines and data-lease
  // deadlines are checked and the metrics refreshed. Default 500 ms: a
  // deadline is noticed within half a second, at negligible cost.
  absl::Duration tick = absl::Milliseconds(500);
  // The longest a GetAssignment long poll waits, whatever it asks for.
  // Default 60 s, below common proxy idle timeouts.
  absl::Duration max_assignment_wait = absl::Seconds(60);
  // Every model_dir, warm_start_from and export_dir must lie under this
  // folder; relative ones are taken from it. Default "/tmp/pstrain", the
  // parameter servers' default --checkpoint_root, since they write the
  // shard files of the same paths. Empty: no confinement, and relative
  // paths are refused.
  std::string checkpoint_root = "/tmp/pstrain";
  // Events of each queued or running job kept for WatchJob; a watcher that
  // falls further behind skips progress events. Default 1024.
  size_t job_events = 1024;
  // What is kept of recent jobs' events for the console (JobEvents).
  JobHistoryOptions history;
  // After a Shutdown request, how long members get to learn it from their
  // heartbeats before the coordinator itself exits. Default 5 s (two
  // heartbeat intervals and some).
  absl::Duration shutdown_notice = absl::Seconds(5);
  // What GetCluster reports as the configured cluster (TF_CONFIG, flags).
  ClusterSpec cluster;
  // The folder of the job journal (job_journal.h): the queued, running and
  // recently ended jobs and the job-id counter, read back by Create, so a
  // coordinator that restarts resumes the job that was running (same id,
  // from its newest checkpoint), then runs the queue, and never gives an
  // id twice. Empty (default): jobs live in memory only.
  // pstrain-coordinator sets <checkpoint_root>/.coordinator (--state_dir).
  std::string state_dir;
  JobJournalOptions journal;
  // What Stop does with the running job when there is a journal. true
  // (default): it stays recorded as running, and the next coordinator on
  // the same state_dir resumes it (a rolling update or a rescheduled pod
  // should not end jobs); false: it ends FAILED. A user's stop and a
  // Shutdown request end jobs either way.
  bool resume_running_job_after_stop = true;
};

// Everything the coordinator knows and does, without gRPC: the membership,
// the job queue and history, each task's assignment, and the running job
// (a JobRunner on the scheduler thread, one job at a time), plus a ticker
// thread for deadlines and metrics. The gRPC services (cluster_service.h,
// job_service.h) are thin adapters over it. Thread-safe.
//
// Every cluster call names its caller; methods taking a task and
// incarnation first check it (MembershipRegistry::CheckCaller): NotFound
// when the task is not registered, Aborted when the incarnation is stale or
// the member was marked lost (the caller must register again).
class Coordinator {
 public:
  // Everything borrowed must outlive the coordinator. `metrics` may be
  // null. `on_shutdown` is called once a Shutdown request has been carried
  // out (the process should exit), with the exit code it asked for; may be
  // empty.
  // With a state_dir, the jobs of its journal are queued again: those that
  // were running first, then the queued ones in their order.
  // InvalidArgument: bad membership or queue options, or a relative
  // checkpoint_root.
  // FailedPrecondition and others: the state_dir cannot be created, read or
  // written (the message names it).
  static absl::StatusOr<std::unique_ptr<Coordinator>> Create(
      Clock& clock, Env& env, JobPlanner& planner, ShardClientFactory shard_clients,
      CoordinatorMetrics* metrics, CoordinatorOptions options,
      std::function<void(int exit_code)> on_shutdown = nullptr);

  // Stop(), then destroys.
  ~Coordinator();

  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Starts the scheduler and ticker threads. Call once.
  void Start();

  // Interrupts the running job (the coordinator is going away), answers
  // every long poll, ends every watch, and joins the threads. Queued jobs
  // are not run; with a journal they stay queued for the next coordinator,
  // and the running job stays recorded as running unless
  // resume_running_job_after_stop is false (then it ends FAILED).
  // Idempotent.
  void Stop();

  // After Stop: whether the running job was left recorded as running, for
  // the next coordinator on the state folder to resume
  // (resume_running_job_after_stop).
  bool left_job_to_resume() const { return left_to_resume_->load(); }

  // ---------------------------------------------------- cluster calls --

  // InvalidArgument, AlreadyExists, FailedPrecondition as
  // MembershipRegistry::Register. A restarted process's predecessor hands
  // its work back.
  absl::StatusOr<RegisterResponse> Register(const RegisterRequest& request);
  absl::StatusOr<HeartbeatResponse> Heartbeat(const HeartbeatRequest& request);
  // MembershipRegistry::Leave; the running job takes back at once what the
  // member held (JobRunner::HandBack), as for a lost member.
  absl::Status Leave(const LeaveRequest& request);
  absl::Status CheckCaller(const TaskId& task, uint64_t incarnation) const;

  // Assignments and their long polls (GetAssignment).
  AssignmentBoard& assignments() { return assignments_; }
  // When a long poll may end at the latest, for one that asks `wait_ms`.
  absl::Time AssignmentDeadline(int64_t wait_ms);
  // The caller received `assignment`: it now works on that job (BUSY).
  void AssignmentDelivered(const TaskId& task, uint64_t incarnation, const Assignment& assignment);

  // The following are for the running job; FailedPrecondition when
  // request.job_id is not it ("job X is SUCCEEDED, not running": stop).
  absl::StatusOr<ProgressResponse> ReportProgress(const ProgressReport& report);
  absl::StatusOr<DataLease> AcquireDataLease(const AcquireDataLeaseRequest& request);
  absl::Status CompleteDataLease(const CompleteDataLeaseRequest& request);
  absl::StatusOr<EvalReportResponse> ReportEval(const EvalReport& report);
  absl::StatusOr<std::shared_ptr<StreamSource<CheckpointNotification>>> WatchCheckpoints(
      const WatchCheckpointsRequest& request);
  absl::Status ReleaseCheckpoint(const ReleaseCheckpointRequest& request);
  // Answers through `done`, once, when the round commits or at once
  // (JobRunner::JoinRound); the caller's and the job's refusals likewise.
  void JoinRound(const JoinRoundRequest& request, RoundKeeper::JoinDone done);

  // -------------------------------------------------------- job calls --

  // Queues the job without reading its data (that is the job's first
  // phase), or with validate_only plans it as its start would, reading the
  // data, and queues nothing. A request id the coordinator knows answers
  // with its job (already_submitted), queueing nothing.
  // InvalidArgument naming the fields at fault (also a path outside the
  // checkpoint root, a malformed request id); NotFound: a data file;
  // ResourceExhausted: the queue is full; AlreadyExists: the request id of
  // a job with another spec.
  absl::StatusOr<SubmitJobResponse> SubmitJob(const SubmitJobRequest& request);
  // NotFound: no such job.
  absl::StatusOr<JobStatus> GetJob(absl::string_view job_id) const;
  // InvalidArgument: a negative limit.
  absl::StatusOr<ListJobsResponse> ListJobs(const ListJobsRequest& request) const;
  // NotFound: no such job. A job already ended is returned as it is.
  absl::StatusOr<StopJobResponse> StopJob(const StopJobRequest& request);
  // The job's events from now: its status first, then until it ends.
  // NotFound: no such job.
  absl::StatusOr<std::shared_ptr<StreamSource<JobEvent>>> WatchJob(const WatchJobRequest& request);
  ClusterStatus GetCluster() const;
  // The job's events since its submit numbered above `after` (JobHistory):
  // what the console plots and lists. Those of a job this coordinator has
  // none of (one that ran before it restarted) are read back from the
  // job's summaries (summary_events.h). NotFound: no such job.
  absl::StatusOr<JobHistory::Read> JobEvents(absl::string_view job_id, uint64_t after);
  // NotFound: no such job. FailedPrecondition: nothing exported for it yet,
  // or a specific checkpoint was asked for (the evaluator exports the best
  // and the final checkpoint; exporting others on demand is not offered).
  absl::StatusOr<ExportModelResponse> ExportModel(const ExportModelRequest& request) const;
  // The running job is stopped (as by a user) and the queued ones end
  // STOPPED: a shutdown ends jobs, where Stop leaves them for the next
  // coordinator.
  // Every member, and then the process (on_shutdown), is told to exit with
  // `exit_code` (common/daemon/exit_codes.h): a one-shot cluster's members
  // exit with the outcome of its job.
  // FailedPrecondition: a job runs and stop_running_job is false.
  absl::Status Shutdown(const ShutdownRequest& request, int exit_code = 0);

  // For tests and status pages.
  std::shared_ptr<JobRunner> running() const;

 private:
  Coordinator(Clock& clock, Env& env, JobPlanner& planner, ShardClientFactory shard_clients,
              CoordinatorMetrics* metrics, CoordinatorOptions options,
              std::unique_ptr<MembershipRegistry> members, std::unique_ptr<JobQueue> jobs,
              std::unique_ptr<JobJournal> journal, std::function<void(int)> on_shutdown);

  using JobLog = internal::EventLog<JobEvent>;

  // Queues again the jobs a previous coordinator process recorded in the
  // journal (before Start).
  void RecoverJobs(const JournalContents& contents);
  // Journal writes; no-ops without a journal. The running job is recorded
  // as it starts and after a rollback (its count must survive a restart).
  // A job that ended is recorded as ended, unless the coordinator's own
  // stop interrupted it and it is to resume.
  void JournalRunning(const JobStatus& job);
  // Also: the job no longer resumes (see resuming_).
  void JournalEnd(absl::string_view job_id);
  // Stop was called and the running job is left to the next coordinator
  // (resume_running_job_after_stop): members must not hear that it ended.
  bool LeavingJobToResume() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void SchedulerLoop();
  void TickerLoop();
  void Tick();
  // The runner of `job_id` if it is the running job, else FailedPrecondition
  // saying what became of it; Unavailable (try again) once Stop leaves the
  // job to the next coordinator.
  absl::StatusOr<std::shared_ptr<JobRunner>> RunnerFor(absl::string_view job_id) const;
  // Appends `event` to the job's log (WatchJob) and its history.
  void AppendEvent(JobLog& log, absl::string_view job_id, JobEvent event);
  // Appends the job's current status to its log.
  void PublishStatus(absl::string_view job_id);
  // Appends the job's final status and closes its log.
  void CloseLog(absl::string_view job_id);
  // ConfineJobPaths under options_.checkpoint_root.
  absl::StatusOr<JobSpec> ConfinePaths(JobSpec spec) const;
  // Queues a prepared spec, records it in the journal and opens its event
  // log, all before the scheduler can start it; or, when `request_id`
  // queued a job already, returns that job (`*existing` true).
  // Unavailable: the coordinator is shutting down. The journal's error
  //   when it cannot record the job (nothing is queued then).
  absl::StatusOr<JobStatus> Enqueue(JobSpec spec, const std::string& request_id, bool* existing)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Unavailable once the coordinator is shutting down.
  absl::Status TakingJobs() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  Clock& clock_;
  Env& env_;
  JobPlanner& planner_;
  const ShardClientFactory shard_clients_;
  CoordinatorMetrics* const metrics_;
  const CoordinatorOptions options_;
  const std::unique_ptr<MembershipRegistry> members_;
  const std::unique_ptr<JobQueue> jobs_;
  // Null without a state_dir.
  const std::unique_ptr<JobJournal> journal_;
  const std::function<void(int exit_code)> on_shutdown_;
  AssignmentBoard assignments_;
  JobHistory history_{options_.history};
  // LeavingJobToResume, as Stop found it, for checkpoint streams that may
  // outlive the coordinator.
  const std::shared_ptr<std::atomic<bool>> left_to_resume_ =
      std::make_shared<std::atomic<bool>>(false);

  mutable absl::Mutex mu_;
  std::shared_ptr<JobRunner> runner_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<JobLog>, std::less<>> logs_ ABSL_GUARDED_BY(mu_);
  // A job may be waiting to start.
  bool jobs_pending_ ABSL_GUARDED_BY(mu_) = false;
  // Jobs that were running when the previous coordinator process stopped,
  // until they end here. Members still working on one hear from Heartbeat
  // that it goes on while it starts again: a member compares job ids only,
  // so one told "no job" meanwhile would leave the job and then ignore the
  // same id when it is assigned again.
  std::set<std::string, std::less<>> resuming_ ABSL_GUARDED_BY(mu_);
  bool shutdown_requested_ ABSL_GUARDED_BY(mu_) = false;
  // Shutdown was requested and no job runs: heartbeats say so.
  bool members_told_to_exit_ ABSL_GUARDED_BY(mu_) = false;
  // What the Shutdown request asked members to exit with.
  int members_exit_code_ ABSL_GUARDED_BY(mu_) = 0;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::thread scheduler_;
  std::thread ticker_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_COORDINATOR_H_
