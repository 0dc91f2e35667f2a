#ifndef PSTRAIN_EVALUATOR_COORDINATOR_CLIENT_H_
#define PSTRAIN_EVALUATOR_COORDINATOR_CLIENT_H_

// The evaluator's own calls to the coordinator's ClusterService
// (protos/coordinator.proto), over its MemberSession (registration,
// heartbeats, the assignment long poll): eval reports, checkpoint releases
// and the checkpoint watch. Unary calls have the session's deadline, retry
// and re-registration.

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/cluster/member_session.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace evaluator {

// One open WatchCheckpoints stream. Next() is for one thread; Cancel() may
// be called from any thread.
class CheckpointWatch {
 public:
  // Opens the stream (it fails, if at all, on the first Next()). It ends at
  // `timeout`, and with the session.
  CheckpointWatch(MemberSession& member, const WatchCheckpointsRequest& request,
                  absl::Duration timeout);
  ~CheckpointWatch();

  CheckpointWatch(const CheckpointWatch&) = delete;
  CheckpointWatch& operator=(const CheckpointWatch&) = delete;

  // Blocks for the next notification.
  // OutOfRange: the stream ended normally (the job's checkpoints are over).
  // Cancelled: Cancel() was called, or the session was. DeadlineExceeded:
  // the stream's deadline passed (open a new one after the last step
  // seen). Otherwise the stream's error (Unavailable, Aborted for a stale
  // incarnation, FailedPrecondition when the job is not running).
  absl::StatusOr<CheckpointNotification> Next();

  // Ends the stream; a blocked Next() returns Cancelled. Idempotent.
  void Cancel();

 private:
  MemberSession& member_;
  grpc::ClientContext context_;
  bool registered_ = false;
  std::unique_ptr<grpc::ClientReader<CheckpointNotification>> reader_;
  // Touched by the reading thread only.
  bool finished_ = false;
  absl::Status final_status_;

  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

// Thread-safe.
class CoordinatorClient {
 public:
  // `member` is borrowed and must outlive the client. A checkpoint watch
  // lasts `watch_timeout` at most; the caller reopens it from the last step
  // seen, so no stream is without a deadline.
  CoordinatorClient(MemberSession& member, absl::Duration watch_timeout)
      : member_(member), watch_timeout_(watch_timeout) {}

  // Fills task and incarnation. Unavailable is retried; a coordinator that
  // forgot this evaluator gets it registered again.
  absl::StatusOr<EvalReportResponse> ReportEval(EvalReport report);
  absl::Status ReleaseCheckpoint(const std::string& job_id, int64_t step);
  // Fills task and incarnation.
  std::unique_ptr<CheckpointWatch> WatchCheckpoints(WatchCheckpointsRequest request);

 private:
  MemberSession& member_;
  const absl::Duration watch_timeout_;
};

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_COORDINATOR_CLIENT_H_
