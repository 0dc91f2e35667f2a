#ifndef PSTRAIN_WORKER_WORKER_LOOP_H_
#define PSTRAIN_WORKER_WORKER_LOOP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "protos/coordinator.pb.h"
#include "common/clock/clock.h"
#include "common/cluster/member_loop.h"
#include "common/clock/stop_signal.h"
#include "worker/coordinator_client.h"
#include "worker/ps_client.h"
#include "common/random/random_source.h"
#include "common/retry/retry.h"
#include "worker/worker_metrics.h"

namespace pstrain {
namespace worker {

struct WorkerLoopOptions {
  // Longest GetAssignment long poll. Default 30 s: an idle worker asks
  // twice a minute, and a new job reaches it at once anyway.
  absl::Duration assignment_wait = absl::Seconds(30);
  // Sync mode: how long one pull waits for a round to complete before the
  // loop reports progress (to hear a stop: the other workers may have
  // stopped and the round never completes) and waits again. Default 2 s.
  absl::Duration round_wait = absl::Seconds(2);
  // Once this worker has no more data, it reports this often (empty
  // reports) until the coordinator says stop, which it waits to hear from
  // every worker before the final checkpoint. Default 1 s.
  absl::Duration done_report_interval = absl::Seconds(1);
  // Async modes: pull the next batch's parameters while the current
  // gradients are pushed. Default true; the pull then misses the update
  // being pushed, one more step of staleness.
  bool overlap_pull_with_push = true;
  // Streamed training data: once the lease in hand has this many batches
  // left or fewer, take the next lease and start reading its window (see
  // AssignmentRun::LeaseAhead). Later leaves too little time to read it;
  // earlier keeps a second lease from other workers for longer, which
  // shows when an epoch has few leases. Default 16; 0: never.
  int lease_ahead_batches = 16;
  // Settings of the parameter-server client (chunking, streams, deadlines,
  // retries); job, worker, incarnation and mode come from the assignment.
  ParameterServerClientOptions ps;
  // Channels to the parameter servers. Default: insecure.
  ParameterServerClient::ChannelFactory ps_channels;
  // Pauses of the loop itself: before asking again for a lease when every
  // range is out, and before asking for work again after a failed run (the
  // deadline is not read: the worker asks until it is stopped).
  RetryOptions backoff;
};

// The training worker: registers with the coordinator, takes assignments,
// and for each one builds the model, then repeatedly leases records, reads
// them as batches (prefetched), pulls parameters, computes gradients,
// pushes them and reports progress every steps_per_loop steps, handing the
// records of refused (stale) pushes back with the lease, until the
// coordinator stops the job, the data ends, or the job changes. Run() owns
// the calling thread (compute runs on it); Stop() may be called from any
// thread.
class WorkerLoop {
 public:
  // `coordinator`, `clock`, `random` and `metrics` (may be null) are
  // borrowed and must outlive the loop.
  WorkerLoop(CoordinatorClient& coordinator, WorkerLoopOptions options, Clock& clock,
             RandomSource& random, WorkerMetrics* metrics);

  WorkerLoop(const WorkerLoop&) = delete;
  WorkerLoop& operator=(const WorkerLoop&) = delete;

  // The worker's life as a cluster member (common/cluster/member_loop.h):
  // registers, starts heartbeats and serves assignments until Stop() or
  // until the coordinator shuts the cluster down. Returns OK then.
  // FailedPrecondition PROCESS_REPLACED: a newer incarnation of this task
  // registered (this process is stale and should exit); InvalidArgument:
  // the coordinator refuses this task.
  absl::Status Run();

  // Trains one assignment until the job stops for this worker: the
  // coordinator says stop, the data ends, the job is no longer this
  // worker's, or Stop(). OK in those cases; the error that ended training
  // otherwise (after handing back the current lease's untrained records).
  absl::Status RunAssignment(const Assignment& assignment);

  // Ends Run() and RunAssignment() soon: waits and calls in flight are
  // cancelled, the current lease is handed back. Thread-safe.
  void Stop();

  // Whether the coordinator asked the cluster to shut down.
  bool shutdown_requested() const;

 private:
  class AssignmentRun;
  friend class AssignmentRun;
  // What the member loop asks of the worker.
  class Role;

  // Whether training of `job_id` should end: Stop(), a shutdown, or a
  // heartbeat sent after the job started (answers_before was the count
  // then) names another job.
  bool JobOver(const std::string& job_id, int64_t answers_before);
  // What a heartbeat answer means for the run's calls in flight: the job's
  // shards' primaries moved past the run's (a failover to a backup,
  // docs/design/replicas.md): the run's client is redirected to the new
  // primaries, where they are retried; the job is over for this worker:
  // they are cancelled.
  void FollowShards(const HeartbeatView& heard);

  // Constant after construction.
  CoordinatorClient& coordinator_;
  const WorkerLoopOptions options_;
  Clock& clock_;
  RandomSource& random_;
  WorkerMetrics* const metrics_;

  StopSignal stop_;
  // The worker's own waits (for a free lease, between reports while it
  // waits to hear the stop) end with Stop().
  const RetryContext waits_{clock_, random_, stop_};
  mutable absl::Mutex mu_;
  // The running assignment's client, cancelled by Stop().
  ParameterServerClient* ps_ ABSL_GUARDED_BY(mu_) = nullptr;
  // The running assignment's job and the replica epoch its client follows.
  std::string run_job_id_ ABSL_GUARDED_BY(mu_);
  // Heartbeat answers before the run began (HeartbeatView.answers).
  int64_t run_answers_before_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t run_replica_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutdown_requested_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_WORKER_LOOP_H_
