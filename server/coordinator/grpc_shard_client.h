#ifndef PSTRAIN_SERVER_COORDINATOR_GRPC_SHARD_CLIENT_H_
#define PSTRAIN_SERVER_COORDINATOR_GRPC_SHARD_CLIENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "common/net/call_registry.h"
#include "common/net/channel_security.h"
#include "common/random/random_source.h"
#include "common/retry/retry.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.grpc.pb.h"
#include "server/coordinator/shard_client.h"

namespace pstrain {
namespace coordinator {

struct GrpcShardClientOptions {
  static RetryOptions DefaultRetry() {
    RetryOptions retry;
    retry.initial_backoff = absl::Milliseconds(100);
    retry.deadline = absl::Minutes(1);
    retry.give_up_as_deadline_exceeded = false;
    return retry;
  }

  // Deadline of one attempt of each call. Creating variables initialises
  // them (large embedding tables take a while); snapshots and restores move
  // whole shards through the disk. Defaults: 2 min, 10 min, 10 min, 30 s.
  absl::Duration create_timeout = absl::Minutes(2);
  absl::Duration snapshot_timeout = absl::Minutes(10);
  absl::Duration restore_timeout = absl::Minutes(10);
  absl::Duration drop_timeout = absl::Seconds(30);
  // ReadPushLedger, each attempt and all retries together. Default 5 s: it
  // is a small read, made while a lost worker's lease waits to be handed
  // back; a shard that cannot answer by then costs that lease's trained
  // part being trained again (see JobRunner::HandBack).
  absl::Duration ledger_timeout = absl::Seconds(5);
  // CommitRound, each attempt. Default 1 min: a commit applies one round
  // (milliseconds to seconds), but queues behind a snapshot or restore the
  // shard is writing or reading. Retried as the other calls are: a commit
  // is idempotent.
  absl::Duration commit_timeout = absl::Minutes(1);
  // ChangeReplica, each attempt and all retries together. Default 5 s: a
  // failover waits on it, and a replica that cannot answer by then is lost
  // too (the job rolls back instead).
  absl::Duration change_replica_timeout = absl::Seconds(5);
  // Retries: only a call that failed with Unavailable (the shard could not
  // be reached) is retried, with backoff, until retry.deadline from the
  // first attempt; then it fails Unavailable. Defaults 100 ms doubling to
  // 5 s, for 1 min: long enough for a restarting shard, short enough that
  // a shard that is gone fails the job with its address in the message.
  RetryOptions retry = DefaultRetry();
  // TLS, the cluster token and the message size limit (--max_message_mb)
  // of the channel. Default: plaintext, no token, kDefaultMaxMessageBytes.
  ChannelSecurity security;
};

// A ShardClient over gRPC. Thread-safe. Backoff waits go through `clock`.
class GrpcShardClient final : public ShardClient {
 public:
  // `clock` is borrowed and must outlive the client.
  GrpcShardClient(std::string address, Clock& clock, GrpcShardClientOptions options = {});
  // With a channel made by the caller (tests use in-process channels).
  GrpcShardClient(std::string address, std::shared_ptr<grpc::Channel> channel, Clock& clock,
                  GrpcShardClientOptions options = {});

  GrpcShardClient(const GrpcShardClient&) = delete;
  GrpcShardClient& operator=(const GrpcShardClient&) = delete;

  absl::StatusOr<CreateVariablesResponse> CreateVariables(
      const CreateVariablesRequest& request) override;
  absl::Status DropJob(const DropJobRequest& request) override;
  absl::StatusOr<SnapshotResponse> Snapshot(const SnapshotRequest& request) override;
  absl::StatusOr<RestoreResponse> Restore(const RestoreRequest& request) override;
  absl::StatusOr<PushLedger> ReadPushLedger(const ReadPushLedgerRequest& request) override;
  absl::StatusOr<CommitRoundResponse> CommitRound(const CommitRoundRequest& request) override;
  absl::StatusOr<ChangeReplicaResponse> ChangeReplica(const ChangeReplicaRequest& request) override;
  void Cancel() override;

 private:
  using Attempt = std::function<grpc::Status(grpc::ClientContext* context)>;

  // Runs `attempt` with a deadline of `timeout` each time, retrying on
  // Unavailable as the options say, for at most `retry_budget` (default:
  // the options'). Errors name the method (ShardGroup adds the shard).
  absl::Status Call(const char* method, absl::Duration timeout, const Attempt& attempt,
                    std::optional<absl::Duration> retry_budget = std::nullopt);

  // Constant after construction.
  const std::string address_;
  Clock& clock_;
  const GrpcShardClientOptions options_;
  const std::unique_ptr<ParameterServer::Stub> stub_;
  SeededRandom random_;
  StopSignal cancelled_;
  const RetryContext retry_context_{clock_, random_, cancelled_};
  // Calls in flight, so Cancel can cancel them.
  CallRegistry calls_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_GRPC_SHARD_CLIENT_H_
