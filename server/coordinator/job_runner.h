#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_RUNNER_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/checkpoint/env.h"
#include "common/clock/clock.h"
#include "common/job/checkpoint_schedule.h"
#include "common/job/retention_policy.h"
#include "common/job/stop_conditions.h"
#include "common/job/train_summaries.h"
#include "protos/coordinator.pb.h"
#include "protos/job.pb.h"
#include "server/coordinator/applied_records.h"
#include "server/coordinator/assignment_board.h"
#include "server/coordinator/checkpoint_failures.h"
#include "server/coordinator/checkpoint_feed.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/data_lease_manager.h"
#include "server/coordinator/global_step.h"
#include "server/coordinator/job_checkpointer.h"
#include "server/coordinator/job_parts.h"
#include "server/coordinator/job_phase.h"
#include "server/coordinator/job_planner.h"
#include "server/coordinator/job_queue.h"
#include "server/coordinator/membership_registry.h"
#include "server/coordinator/shard_client.h"
#include "server/coordinator/shard_group.h"
#include "server/coordinator/stream_source.h"
#include "server/coordinator/variable_placement.h"
#include "server/coordinator/wait_tracker.h"

namespace pstrain {
namespace coordinator {

struct JobRunnerOptions {
  // Parameter servers and workers a training job runs on: tasks ps/0 ..
  // ps/(num_ps - 1) and likewise for workers. 0 (default): those registered
  // when the job starts (1 + the highest live index, at least 1).
  int num_ps = 0;
  int num_workers = 0;
  // How long a job waits for its members to register before it fails.
  // Default 10 minutes: room for a cluster that is still starting (pods
  // being scheduled, images pulled) while a misconfigured one fails the job
  // with the names of the tasks it waited for.
  absl::Duration member_wait_timeout = absl::Minutes(10);
  // After a stop decision, how long workers get to hear it (in their next
  // progress report) before the final checkpoint is taken regardless.
  // Default 60 s: a worker reports every steps_per_loop steps.
  absl::Duration stop_drain_timeout = absl::Seconds(60);
  // How long the evaluator may take to report its evaluation of the final
  // checkpoint before the job fails. Default 30 minutes.
  absl::Duration final_eval_timeout = absl::Minutes(30);
  // The job's loop wakes at least this often to check max_seconds, the
  // checkpoint schedule and what it waits for. Default 1 s.
  absl::Duration poll_interval = absl::Seconds(1);
  // Data leases: records per lease (default 0: LeaseSizeFor the job's data
  // and workers) and how long a worker may hold one (default 5 minutes);
  // see DataLeaseOptions.
  int64_t records_per_lease = 0;
  absl::Duration lease_timeout = absl::Minutes(5);
  // Continuous evaluation: how often model_dir is listed for new
  // checkpoints. Default 10 s.
  absl::Duration model_dir_poll = absl::Seconds(10);
  WaitTrackerOptions wait_reports;
};

// What a runner works with. Everything is borrowed and outlives it.
struct JobRunnerContext {
  Clock* clock = nullptr;
  Env* env = nullptr;
  MembershipRegistry* members = nullptr;
  JobQueue* jobs = nullptr;
  AssignmentBoard* assignments = nullptr;
  JobPlanner* planner = nullptr;
  ShardClientFactory shard_clients;
  // May be null.
  CoordinatorMetrics* metrics = nullptr;
  // Receives the job's events for WatchJob; may be empty.
  std::function<void(JobEvent event)> publish;
  // Records the job's status where a restarted coordinator finds it (the
  // journal), after a change it must not forget (a rollback); may be empty.
  std::function<void(const JobStatus& job)> record;
};

// Drives the one running job from RUNNING to its end: waits for its members
// (saying what it waits for in the job's reason and the log), places and
// creates its variables on the parameter servers, resumes from model_dir or
// warm-starts, hands out assignments, owns its data leases, global step,
// stop conditions and checkpoints while workers train, and on a stop takes
// the final checkpoint, waits for its evaluation, ends the job, drops it
// from the shards and sends every member back to idle.
//
// Run() blocks on its own thread; every other method is called by cluster
// RPCs or the coordinator's ticker and returns at once. Thread-safe.
class JobRunner : public std::enable_shared_from_this<JobRunner> {
 public:
  // `job` as JobQueue::StartNext returned it.
  JobRunner(JobStatus job, JobRunnerOptions options, JobRunnerContext context);
  ~JobRunner();

  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  const std::string& job_id() const { return job_id_; }

  // Runs the job to its end (SUCCEEDED, FAILED or STOPPED in the queue).
  // Call once.
  void Run();

  // ---- Cluster calls for this job. The caller has checked the caller's
  // incarnation (MembershipRegistry::CheckCaller) and that this is the job.

  // Counts the report's updates into the global step, checks the stop
  // conditions and tells the worker whether to stop.
  // Unavailable: the job is still starting; report again.
  // InvalidArgument: negative updates.
  absl::StatusOr<ProgressResponse> ReportProgress(const ProgressReport& report);

  // Unavailable: the job is still starting, or every range is leased out
  // (ask again). A lease with end_of_data once the job is stopping or the
  // data is used up.
  absl::StatusOr<DataLease> AcquireDataLease(const TaskId& task, uint64_t incarnation);

  // NotFound: unknown or expired lease. InvalidArgument: bad returned
  // ranges. Unavailable: the job is still starting.
  absl::Status CompleteDataLease(const CompleteDataLeaseRequest& request);

  // Records an evaluation; tells whether it is the best so far.
  // InvalidArgument: metrics given without eval.best_metric.
  absl::StatusOr<EvalReportResponse> ReportEval(const EvalReport& report);

  // The stream of this job's checkpoints newer than request.after_step,
  // each leased to the caller as it is sent, until the job ends.
  std::shared_ptr<StreamSource<CheckpointNotification>> WatchCheckpoints(
      const WatchCheckpointsRequest& request);

  // Releases the caller's lease on a checkpoint; releasing one not held is
  // not an error (a retry).
  absl::Status ReleaseCheckpoint(const ReleaseCheckpointRequest& request);

  // ---- From the coordinator.

  // A member registered or came back: re-check what the job waits for.
  void MembersChanged();

  // `incarnation` of `task` was lost or replaced (`why`): its data and
  // checkpoint leases go back. Losing a parameter server of the job while
  // it trains pauses training until the shard is back, then rolls every
  // shard back to the newest good checkpoint (RollBack); in other phases
  // it fails the job.
  void HandBack(const TaskId& task, uint64_t incarnation, absl::string_view why);

  // A user stopped the job (JobQueue::Stop already moved it to FINISHING).
  // `immediately` skips the final checkpoint and evaluation.
  void RequestStop(bool immediately);

  // The coordinator is shutting down: end the job FAILED as soon as
  // possible, cancelling calls to the shards.
  void Abort(std::string why);

  // From the ticker: expires overdue data leases.
  void Tick();

  int64_t global_step() const;
  double examples_per_sec() const;
  int64_t leases_outstanding() const;

 private:
  // How the job ends.
  struct Outcome {
    JobState state = JOB_STATE_FAILED;
    std::string message;
  };

  // Where a training job starts from.
  struct StartPoint {
    int64_t step = 0;
    std::string checkpoint_dir;  // empty: fresh variables
    CheckpointManifest manifest;
    bool warm_start = false;  // variables only: step 0, data from the start
  };

  // Admits `call` in the current phase (job_phase.h); the job's parts for
  // it, null when the job was stopped while starting.
  absl::StatusOr<std::shared_ptr<const JobParts>> AdmitCall(JobCall call) const;
  // The job's parts once it has started; null while starting, and when it
  // was stopped while starting.
  std::shared_ptr<const JobParts> StartedParts() const;
  // For the Run thread after Prepare published the parts.
  const JobParts& Parts() const;
  // The training job's shards once connected; null before and for jobs
  // that do not train.
  std::shared_ptr<ShardGroup> Shards() const;

  // Phases of Run.
  // Fills parts.num_ps and parts.num_workers.
  absl::Status WaitForMembers(JobParts& parts);
  absl::Status Prepare();
  absl::Status Train();
  // Waits for every parameter server of the job to be live, then starts a
  // new generation on all of them from the newest good checkpoint (fresh
  // variables without one): the global step and the data position go
  // back to the checkpoint's, and workers get new assignments. `why`: the
  // loss that caused it. Cancelled: a user stopped the job meanwhile.
  absl::Status RollBack(const std::string& why);
  // RollBack's wait: every parameter server of the job live again, at the
  // address the job placed its variables on; their new incarnations become
  // the ones the job runs on. Cancelled: a user stopped the job meanwhile
  // (then without a final checkpoint: the shards disagree).
  absl::Status AwaitShardsBack(const std::string& why);
  // A generation above every earlier one, also those of an earlier
  // coordinator process (microseconds since the epoch).
  uint64_t NextGeneration();
  absl::Status EvaluateOnly();
  // After training stopped: the final checkpoint and evaluation. Returns
  // how the job ends.
  Outcome Finish();
  // Frees the cluster: closes the checkpoint feed, sends members back to
  // idle and drops the job from the shards.
  void Cleanup();

  // Steps of the phases.
  std::vector<TaskId> MissingMembers(int* num_ps, int* num_workers) const;
  // A client for each of the job's `num_ps` parameter servers, and the
  // generation they start.
  absl::Status ConnectShards(int num_ps);
  absl::StatusOr<StartPoint> FindStartPoint();
  // model_dir/train: loss, learning rate, examples/s, steps/s. Null when
  // they cannot be opened.
  std::unique_ptr<TrainSummaries> OpenTrainSummaries();
  // Renames a damaged checkpoint folder to <folder>.damaged (or
  // .damaged-<n>), out of the way of the checkpoint training will save at
  // its step, but kept for a person to look at.
  absl::Status SetAside(const std::string& checkpoint_dir);
  void AnnounceExistingCheckpoints();
  absl::Status CreateVariables(const JobParts& parts, const VariableLayout& layout);
  // The data leases and the global step of a training job starting at
  // `start`, into `parts`.
  absl::Status CreateLedgers(const StartPoint& start, const JobPlan& plan, JobParts& parts);
  void PublishAssignments(const JobParts& parts, const VariableLayout* layout,
                          const StartPoint& start);
  // Decides END_OF_DATA once every record of the last epoch is finished;
  // returns the decision that stands. Thread-safe.
  std::optional<StopDecision> CheckEndOfData(const JobParts& parts, int64_t step);
  absl::StatusOr<CheckpointInfo> TakeCheckpoint(int64_t step, bool final);
  // A periodic checkpoint, when the schedule says one is due. Returns the
  // stop decision that stands once checkpoints failed too often in a row.
  std::optional<StopDecision> MaybeCheckpoint(const JobParts& parts, int64_t step);
  absl::Status FinalCheckpoint();
  void ApplyRetention();
  void DrainWorkers();
  absl::Status WaitForEvaluation(int64_t step);
  void LookForNewCheckpoints();

  void MoveTo(JobPhase next) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits until poked, stopped or aborted, or `deadline`. Returns the abort
  // (Aborted) or stop (Cancelled) status when either happened.
  absl::Status WaitForChange(absl::Time deadline);
  absl::Status Interruption() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Poke();
  // The final checkpoint is saved: losing a shard no longer matters.
  void MarkShardsDone();
  // Ends the job in the queue (moving it to FINISHING first when needed).
  void End(JobState state, const std::string& message);
  // The job's reason in its status: what it does now. Its event goes out
  // when that changes; a wait's growing age alone does not send one.
  void SetReason(const std::string& reason);
  // `prefix` + "waiting for <what> since <age>".
  void SetWaitReason(absl::string_view prefix, WaitTracker& tracker);
  void UpdateReason(const std::string& reason, const std::string& what);
  void PublishStatus();
  // A checkpoint at `step` failed with `error`: the job's status, the
  // metrics, the log and the event say so.
  void PublishCheckpointFailure(int64_t step, bool final, const absl::Status& error);
  // The job's status is copied into the queue, which refuses a write only
  // for a job it does not know or that is no longer active: this runner's
  // job is active until End(), so a refusal (a call racing with the end)
  // is logged, not acted on.
  void CheckQueueWrite(absl::string_view what, const absl::Status& written) const;
  void Publish(JobEvent event);
  // ReportEval of a checkpoint that was not evaluated (missing, skipped,
  // none new, or the job cannot be evaluated).
  void NoteNotEvaluated(const EvalReport& report);
  // ReportEval with metrics: the job's status, the log, the event, and
  // whether a continuous evaluation is done.
  void RecordEvaluation(const EvalReport& report, const std::map<std::string, double>& metrics,
                        const EvalOutcome& outcome);
  // An eval event for a checkpoint that was not evaluated, with why.
  void PublishSkipped(int64_t step, std::string why);
  void RefreshCheckpointsInStatus();
  std::string ResumeHint() const;
  static bool IsJobWorker(const JobParts& parts, const TaskId& task);
  // The job's sync rounds have a slot per worker rank (RoundsHaveWorkerSlots):
  // its data leases go to the slots (DataLeaseOptions::sync_slots).
  bool DealsLeasesToSyncSlots(const JobParts& parts) const;
  // A job worker's sync slot: its rank.
  static int SyncSlotOf(const TaskId& task) { return task.index(); }
  // Before a lost worker's leases go back whole: reads (and seals) them on
  // every shard's push ledger, finishes the records its applied pushes
  // trained on and re-queues only the rest. Returns a note for the log,
  // empty when there was nothing to do.
  std::string HandBackTrainedRecords(const JobParts& parts, const std::string& holder);
  // The records the shards applied pushes of, for each of `leases`, read
  // from every shard's push ledger and merged; sealed while read, so that
  // a push of them still on its way is refused from now on. nullopt while
  // the job is not training or finishing (a rollback voids the leases).
  // A shard that does not answer is left out, with a warning: what only it
  // applied is trained again there, the least harm without its answer.
  std::optional<AppliedRecords> ReadAppliedRecords(const std::vector<DataLease>& leases,
                                                   const std::string& holder);
  // CompleteDataLease of a lease with a push of unknown outcome: the
  // records the ledgers do not show applied go back to the queue.
  absl::Status CompleteFromLedgers(const JobParts& parts, const std::string& holder,
                                   int64_t lease_id);

  // Constant after construction.
  const std::string job_id_;
  const JobSpec spec_;
  const JobRunnerOptions options_;
  const JobRunnerContext context_;
  Clock& clock_;
  const bool trains_;
  const bool evaluates_;
  const std::string model_dir_;
  const std::shared_ptr<CheckpointFeed> feed_;
  const std::shared_ptr<RetentionPolicy> retention_;

  // Used by the Run thread only. Made by Prepare for a training job; a
  // rollback replaces the schedule.
  std::optional<VariableLayout> layout_;
  std::unique_ptr<JobCheckpointer> checkpointer_;
  std::unique_ptr<CheckpointSchedule> schedule_;
  std::string published_reason_;
  CheckpointFailures checkpoint_failures_;
  std::optional<int64_t> final_step_;

  // The run of the job's variables on the shards (Assignment.generation).
  // Written by the Run thread, read by progress reports.
  std::atomic<uint64_t> generation_{0};

  // Orders what progress reports publish; never held with mu_.
  absl::Mutex progress_mu_;
  // The newest global step published (queue, summaries, events); a
  // rollback sets it back.
  int64_t published_step_ ABSL_GUARDED_BY(progress_mu_) = 0;

  mutable absl::Mutex mu_;
  // Moves happen on the Run thread only, through MoveTo (job_phase.h says
  // which are allowed); cluster calls are admitted by AdmitCall.
  JobPhase phase_ ABSL_GUARDED_BY(mu_) = JobPhase::kStarting;
  // Null while starting; set with the move out of kStarting, never reset.
  std::shared_ptr<const JobParts> parts_ ABSL_GUARDED_BY(mu_);
  // The training job's parameter servers, from ConnectShards on (during
  // Prepare: an abort cancels their calls, Cleanup drops the job from
  // them even when Prepare failed); never replaced.
  std::shared_ptr<ShardGroup> shards_ ABSL_GUARDED_BY(mu_);
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool immediately_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::string> abort_reason_ ABSL_GUARDED_BY(mu_);
  // Why the job must fail (a parameter server was lost, the evaluator
  // cannot evaluate it).
  std::optional<absl::Status> failure_ ABSL_GUARDED_BY(mu_);
  // A parameter server of the job was lost while it trained: why. The
  // Run thread rolls back.
  std::optional<std::string> shard_lost_ ABSL_GUARDED_BY(mu_);
  // The incarnation of each shard's process the current generation runs
  // on; the loss of another (older) one is already dealt with.
  std::vector<uint64_t> shard_incarnations_ ABSL_GUARDED_BY(mu_);
  bool shards_done_ ABSL_GUARDED_BY(mu_) = false;
  // Workers told to stop, by task index.
  std::set<int> stop_heard_ ABSL_GUARDED_BY(mu_);
  // Checkpoints the evaluator could not evaluate, with why.
  std::map<int64_t, std::string> unevaluable_ ABSL_GUARDED_BY(mu_);
  // Set when the evaluator gave up looking for new checkpoints (continuous
  // evaluation): why.
  std::optional<std::string> evaluator_done_ ABSL_GUARDED_BY(mu_);
  // Metrics of each evaluated checkpoint step.
  std::map<int64_t, std::map<std::string, double>> evaluations_ ABSL_GUARDED_BY(mu_);
  // Checkpoint steps the evaluator reported on: evaluated, skipped or
  // unevaluable.
  std::set<int64_t> accounted_ ABSL_GUARDED_BY(mu_);
  // Examples per second of each reporter (HolderName).
  std::map<std::string, double> rates_ ABSL_GUARDED_BY(mu_);
  double last_loss_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_RUNNER_H_
