#ifndef PSTRAIN_COMMON_CLUSTER_MEMBER_LOOP_H_
#define PSTRAIN_COMMON_CLUSTER_MEMBER_LOOP_H_

// The life of a cluster member that takes assignments (a worker, the
// evaluator), written once above its MemberSession:
//
//   RegisterUntilAccepted ──► StartHeartbeats(role's hooks) ──┐
//        │ final refusal: Run returns it                      ▼
//        │                     ┌──► GetAssignment (long poll) ─── final refusal: Run returns it
//        │                     │        │ idle, or the run already done
//        │                     │◄───────┤
//        │                     │        ▼
//        │                     │   role.RunAssignment ── OK: the run is done
//        │                     │        │ voided (EndsRun) or failed:
//        │                     └────────┘ take the job's current assignment up after a pause
//        ▼
//   Cancel (session) or the cluster's shutdown: Run returns OK
//
// Refusals are judged by one policy (IsFinalRefusal, member_refusal.h);
// pauses are common/retry's, on the session's clock and cancellation.

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/cluster/member_session.h"
#include "common/retry/backoff.h"
#include "protos/coordinator.pb.h"

namespace pstrain {

// What one kind of member does; the MemberLoop decides when.
class MemberRole {
 public:
  virtual ~MemberRole() = default;

  // Works on `assignment` (of a job: never idle) until it is over for this
  // member. OK: done; the same run is not handed to it again. An error
  // whose reason ends the run (EndsRun in common/status/error_reason.h: a
  // rollback, the job ended, this member was marked lost) or asks it to
  // register again: the run was voided; the job's current assignment is
  // taken up again after a pause. Any other error: the run failed here; it
  // is asked for again after a pause. Called on Run's thread.
  virtual absl::Status RunAssignment(const Assignment& assignment) = 0;

  // Fills what this member says of itself into a heartbeat (job_id, step,
  // health, queue_depth). Called on the heartbeat thread.
  virtual void DescribeSelf(HeartbeatRequest* beat) = 0;

  // The coordinator shuts the cluster down: end the work in hand soon. Run
  // returns once RunAssignment has. Called once, on the heartbeat thread.
  virtual void ShutDown() = 0;

  // What each heartbeat answer said (a job's shards' primaries moving,
  // HeartbeatView.replica_epoch). Called on the heartbeat thread. Default:
  // nothing.
  virtual void Heard(const HeartbeatView& /*heard*/) {}
};

struct MemberLoopOptions {
  // Longest GetAssignment long poll. Default 30 s: an idle member asks
  // twice a minute, and a new job reaches it at once anyway.
  absl::Duration assignment_wait = absl::Seconds(30);
  // Pauses before asking again after a refusal for now or a failed run;
  // the deadline is not read (a member asks until it is stopped).
  RetryOptions pauses;
  // Take up the job known again once this member has registered again (the
  // coordinator restarted, or marked it lost). For members whose
  // assignments carry no generation (the evaluator): a restarted
  // coordinator resumes the job under the same id, and what the member did
  // for it was forgotten. Default false: a new run has a new generation.
  bool rerun_after_reregistration = false;
};

// Drives one MemberRole over one MemberSession. Run() owns its thread;
// shutdown_requested() may be called from any thread. Cancelling the
// session ends Run soon.
class MemberLoop {
 public:
  // `session` and `role` are borrowed and must outlive the loop.
  MemberLoop(MemberSession& session, MemberRole& role, MemberLoopOptions options);

  MemberLoop(const MemberLoop&) = delete;
  MemberLoop& operator=(const MemberLoop&) = delete;

  // Registers, starts the heartbeats and runs one assignment after another
  // until the session is cancelled or the coordinator shuts the cluster
  // down; OK then. A final refusal (IsFinalRefusal) of the registration or
  // of a request for work is returned: FailedPrecondition PROCESS_REPLACED
  // (this process is stale and should exit), InvalidArgument.
  absl::Status Run();

  // Whether the coordinator asked the cluster to shut down.
  bool shutdown_requested() const;

 private:
  // The run this member last took up: a rollback starts a new run (a new
  // generation) of the same job.
  struct KnownRun {
    std::string job_id;
    uint64_t generation = 0;
  };

  // One request for work and, when it brings a new run, the run. OK: ask
  // again at once. Otherwise the status to pause on, or to end Run with.
  absl::Status ServeOnce(KnownRun& known);
  absl::Status RunOne(const Assignment& assignment, KnownRun& known);
  void NoteShutdown();

  // Constant after construction.
  MemberSession& session_;
  MemberRole& role_;
  const MemberLoopOptions options_;

  mutable absl::Mutex mu_;
  bool shutdown_requested_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLUSTER_MEMBER_LOOP_H_
