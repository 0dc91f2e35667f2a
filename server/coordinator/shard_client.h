#ifndef PSTRAIN_SERVER_COORDINATOR_SHARD_CLIENT_H_
#define PSTRAIN_SERVER_COORDINATOR_SHARD_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {
namespace coordinator {

// The calls the coordinator makes on one parameter-server shard to set up,
// checkpoint, restore and drop a job. Each call has a deadline and returns
// the shard's status (see ParameterServer in protos/parameter_server.proto),
// Unavailable when the shard could not be reached, or Cancelled after
// Cancel(). Implementations are thread-safe.
class ShardClient {
 public:
  virtual ~ShardClient() = default;

  virtual absl::StatusOr<CreateVariablesResponse> CreateVariables(
      const CreateVariablesRequest& request) = 0;
  virtual absl::Status DropJob(const DropJobRequest& request) = 0;
  virtual absl::StatusOr<SnapshotResponse> Snapshot(const SnapshotRequest& request) = 0;
  virtual absl::StatusOr<RestoreResponse> Restore(const RestoreRequest& request) = 0;
  // The shard's push ledger of the job (PushLedger), sealing the leases
  // asked for when request.seal. Unimplemented by clients that keep none.
  virtual absl::StatusOr<PushLedger> ReadPushLedger(const ReadPushLedgerRequest& /*request*/) {
    return absl::UnimplementedError("this shard client reads no push ledger");
  }
  // Applies a sync round's members on the shard (agreed rounds,
  // docs/design/sync_rounds.md); idempotent. Unimplemented by clients of
  // shards that decide their rounds alone.
  virtual absl::StatusOr<CommitRoundResponse> CommitRound(
      const CommitRoundRequest& /*request*/) {
    return absl::UnimplementedError("this shard client commits no sync round");
  }

  // Changes the shard replica's role under a new epoch (hot-standby
  // replicas, docs/design/replicas.md). Unimplemented by clients of shards
  // without replicas.
  virtual absl::StatusOr<ChangeReplicaResponse> ChangeReplica(
      const ChangeReplicaRequest& /*request*/) {
    return absl::UnimplementedError("this shard client changes no replica");
  }

  // Makes calls in progress, and every later call, return Cancelled soon
  // (the coordinator is shutting down).
  virtual void Cancel() = 0;
};

// Makes a client of the shard serving at `address` (host:port).
using ShardClientFactory = std::function<std::unique_ptr<ShardClient>(const std::string& address)>;

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_SHARD_CLIENT_H_
