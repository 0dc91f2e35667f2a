#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_RUNNER_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_RUNNER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "protos/coordinator.pb.h"
#include "protos/job.pb.h"
#include "server/coordinator/job_control.h"
#include "server/coordinator/job_parts.h"
#include "server/coordinator/round_keeper.h"
#include "server/coordinator/stream_source.h"

namespace pstrain {
namespace coordinator {

// Drives the one running job from RUNNING to its end through its phases:
// start (job_start.h: members, plan, variables, resume, assignments),
// training (job_training.h, with rollbacks) or evaluation only
// (job_evaluation.h), finishing (job_finish.h: the final checkpoint and
// its evaluation) and the end, which frees the cluster. It owns the job's
// parts (job_parts.h) and answers the cluster calls that name the job by
// handing each to the parts it concerns.
//
// Run() blocks on its own thread; every other method is called by cluster
// RPCs or the coordinator's ticker and returns at once. Thread-safe.
class JobRunner : public std::enable_shared_from_this<JobRunner> {
 public:
  // `job` as JobQueue::StartNext returned it.
  JobRunner(const JobStatus& job, JobRunnerOptions options, JobRunnerContext context);

  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  const std::string& job_id() const { return parts_.job_id; }

  // Runs the job to its end (SUCCEEDED, FAILED or STOPPED in the queue).
  // Call once.
  void Run();

  // ---- Cluster calls for this job. The caller has checked the caller's
  // incarnation (MembershipRegistry::CheckCaller) and that this is the job.
  // Each is admitted by the job's phase first (job_phase.h).

  // Counts the report's updates into the global step, checks the stop
  // conditions and tells the worker whether to stop.
  // FailedPrecondition RUN_ROLLED_BACK: a report of an earlier generation.
  // InvalidArgument: negative updates.
  absl::StatusOr<ProgressResponse> ReportProgress(const ProgressReport& report);

  // Unavailable NO_FREE_LEASE: every range is leased out (ask again). A
  // lease with end_of_data once the job is stopping or the data is used up.
  absl::StatusOr<DataLease> AcquireDataLease(const TaskId& task, uint64_t incarnation);

  // NotFound: unknown or expired lease. InvalidArgument: bad returned
  // ranges.
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

  // A worker's push joins a sync round (agreed rounds only: RoundKeeper);
  // `done` gets the answer once the round is committed, or at once when
  // the push is late or refused (RoundKeeper::Join lists the codes).
  void JoinRound(const JoinRoundRequest& request, RoundKeeper::JoinDone done);

  // ---- From the coordinator.

  // A member registered or came back: re-check what the job waits for.
  void MembersChanged();

  // `task` registered, a new process or one that restarted: a worker joins
  // the job (JobWorkers::Join) if it is not one of its ranks yet, and the
  // log says so, or why it cannot.
  void MemberRegistered(const TaskId& task);

  // `incarnation` of `task` was lost or replaced (`why`): a worker is first
  // dropped from the open sync round (a round being committed with it
  // finishes first), so that the shards' ledgers read next hold every push
  // of it that will ever be applied; then its data and checkpoint leases
  // go back. Losing a parameter server of the job while it trains pauses
  // training until the shard is back, then rolls every shard back to the
  // newest good checkpoint (job_rollback.h); in other phases it fails the
  // job.
  void HandBack(const TaskId& task, uint64_t incarnation, absl::string_view why);

  // A user stopped the job (JobQueue::Stop already moved it to FINISHING).
  void RequestStop(StopMode mode);

  // The coordinator is shutting down: end the job FAILED as soon as
  // possible, cancelling calls to the shards.
  void Abort(std::string why);

  // From the ticker: expires overdue data leases, updates the metrics.
  void Tick();

  // 0 before the job trains.
  int64_t global_step() const;

 private:
  JobParts parts_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_RUNNER_H_
