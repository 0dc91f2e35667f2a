#ifndef PSTRAIN_EVALUATOR_COORDINATOR_CLIENT_H_
#define PSTRAIN_EVALUATOR_COORDINATOR_CLIENT_H_

// The evaluator's calls to the coordinator's ClusterService
// (protos/coordinator.proto), each one with a deadline, with gRPC statuses
// turned into absl::Status (common/status/grpc_status.h). Retrying is the
// caller's business (evaluator/internal/retry.h).

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/net/channel_security.h"
#include "protos/coordinator.pb.h"

namespace pstrain {
namespace evaluator {

// One open WatchCheckpoints stream. Next() is for one thread; Cancel() may
// be called from any thread.
class CheckpointWatch {
 public:
  virtual ~CheckpointWatch() = default;

  // Blocks for the next notification.
  // OutOfRange: the stream ended normally (the job's checkpoints are over).
  // Cancelled: Cancel() was called. DeadlineExceeded: the stream's deadline
  // passed (open a new one after the last step seen). Otherwise the
  // stream's error (Unavailable, Aborted for a stale incarnation,
  // FailedPrecondition when the job is not running).
  virtual absl::StatusOr<CheckpointNotification> Next() = 0;

  // Ends the stream; a blocked Next() returns Cancelled. Idempotent.
  virtual void Cancel() = 0;
};

// Implementations are thread-safe.
class CoordinatorClient {
 public:
  virtual ~CoordinatorClient() = default;

  virtual absl::StatusOr<RegisterResponse> Register(const RegisterRequest& request) = 0;
  virtual absl::StatusOr<HeartbeatResponse> Heartbeat(const HeartbeatRequest& request) = 0;
  // Long poll: the call's deadline covers request.wait_ms on top of the
  // usual one.
  virtual absl::StatusOr<Assignment> GetAssignment(const GetAssignmentRequest& request) = 0;
  virtual absl::StatusOr<EvalReportResponse> ReportEval(const EvalReport& request) = 0;
  virtual absl::Status ReleaseCheckpoint(const ReleaseCheckpointRequest& request) = 0;
  // Opens a stream (it fails, if at all, on the first Next()).
  virtual std::unique_ptr<CheckpointWatch> WatchCheckpoints(
      const WatchCheckpointsRequest& request) = 0;

  // Cancels the calls in flight (they return Cancelled) and makes every
  // later call return Cancelled at once, so a stopping process does not
  // wait out a long poll. Idempotent.
  virtual void Shutdown() = 0;
};

struct GrpcCoordinatorClientOptions {
  // Deadline of each unary call. Default 10 s.
  absl::Duration call_timeout = absl::Seconds(10);
  // Deadline of one WatchCheckpoints stream; a stream that reaches it is
  // reopened by the caller from the last step seen, so no stream is
  // without a deadline. Default 10 minutes.
  absl::Duration watch_timeout = absl::Minutes(10);
  // TLS, the cluster token and the message size limit (--max_message_mb).
  // Default: plaintext, no token, kDefaultMaxMessageBytes.
  ChannelSecurity security;
};

// Over one gRPC channel with options.security.
std::unique_ptr<CoordinatorClient> NewGrpcCoordinatorClient(
    const std::string& address, const GrpcCoordinatorClientOptions& options = {});

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_COORDINATOR_CLIENT_H_
