#ifndef PSTRAIN_SERVER_PS_PARAMETER_SERVER_SERVICE_H_
#define PSTRAIN_SERVER_PS_PARAMETER_SERVER_SERVICE_H_

#include <cstdint>

#include "absl/time/time.h"
#include "common/net/raw_push_pull_service.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.grpc.pb.h"
#include "server/ps/internal/serial_executor.h"
#include "server/ps/lane_registry.h"
#include "server/ps/shard_store.h"

namespace pstrain {

struct ParameterServerServiceOptions {
  // Bytes of values per message in pull answers on the stream. Default
  // 1 MiB: gRPC moves 64 KiB..1 MiB messages fastest.
  int64_t chunk_bytes = 1 << 20;
  // Largest answer of the unary Pull. Default 15 MiB, under the server's
  // 16 MiB message limit; larger reads belong on PushPull.
  int64_t max_unary_pull_bytes = 15 << 20;
  // Answers one stream may have queued for sending before the shard stops
  // reading that stream's requests (flow control: a client that sends
  // faster than it reads waits instead of growing the shard's memory).
  // Default 32 MiB.
  int64_t max_queued_bytes_per_stream = 32 << 20;
  // Longest wait a pull may ask for with wait_ms. Default 10 minutes.
  absl::Duration max_wait = absl::Minutes(10);
  // Longest request on a shared-memory lane's connection. Default 16 MiB,
  // like the gRPC server's message limit (a lane's requests hold their
  // tensor bytes in the segment and are far smaller).
  int64_t max_lane_request_bytes = 16 << 20;
};

// The ParameterServer gRPC service: parses and validates requests, calls
// the ShardStore, converts statuses (common/status/grpc_status.h). Uses the
// callback API; no server thread blocks on a slow sync round (pulls that
// wait for a version are callbacks) and slow calls (CreateVariables,
// Snapshot, Restore, CommitRound) run on an internal thread, one at a
// time. Thread-safe.
//
// Status codes, for every method: InvalidArgument for a malformed request,
// NotFound for an unknown variable, FailedPrecondition for a job that is not
// running here, ResourceExhausted for a message or answer over its size
// limit (the server's max receive size is enforced by gRPC itself); per
// method as ShardStore documents. On PushPull, a refused push is answered
// with outcome REJECTED and a status, a failed pull with `error`, and the
// stream goes on.
//
// PushPull is served on raw ByteBuffers (parsed and serialised here) so
// that pull answers carry the variables' values in slices read straight
// from the shard. A request naming a shared-memory lane (LaneRegion) has
// its dense bytes in the lane's segment: a push's are copied out of it
// before the push is taken, a pull's values are read into it under the
// variables' locks; the rest of the handling is the same on both paths.
// An open lane's own connection carries its worker's PushPull requests
// and their answers (server/ps/lane_session.h), served by this service as
// the stream's are (server/ps/push_pull_session.h).
class ParameterServerService final : public RawPushPullParameterServer, private LaneServer {
 public:
  // `store` and `lanes` are borrowed and must outlive the service, which
  // serves `lanes` until it is destroyed. `lanes` null: no shared-memory
  // lanes (OpenLane answers FailedPrecondition).
  explicit ParameterServerService(ShardStore& store, ParameterServerServiceOptions options = {},
                                  LaneRegistry* lanes = nullptr);
  ~ParameterServerService() override;

  ParameterServerService(const ParameterServerService&) = delete;
  ParameterServerService& operator=(const ParameterServerService&) = delete;

  grpc::ServerUnaryReactor* CreateVariables(grpc::CallbackServerContext* context,
                                            const CreateVariablesRequest* request,
                                            CreateVariablesResponse* response) override;
  grpc::ServerUnaryReactor* DropJob(grpc::CallbackServerContext* context,
                                    const DropJobRequest* request,
                                    DropJobResponse* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* PushPull(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* Pull(grpc::CallbackServerContext* context, const PullRequest* request,
                                 PullResponse* response) override;
  grpc::ServerUnaryReactor* Snapshot(grpc::CallbackServerContext* context,
                                     const SnapshotRequest* request,
                                     SnapshotResponse* response) override;
  grpc::ServerUnaryReactor* Restore(grpc::CallbackServerContext* context,
                                    const RestoreRequest* request,
                                    RestoreResponse* response) override;
  grpc::ServerUnaryReactor* ReadPushLedger(grpc::CallbackServerContext* context,
                                           const ReadPushLedgerRequest* request,
                                           PushLedger* response) override;
  // Runs on the slow calls' thread, after the snapshots and restores
  // asked for before it: a commit never waits on one of them while a
  // gRPC thread waits on it.
  grpc::ServerUnaryReactor* CommitRound(grpc::CallbackServerContext* context,
                                        const CommitRoundRequest* request,
                                        CommitRoundResponse* response) override;
  grpc::ServerUnaryReactor* OpenLane(grpc::CallbackServerContext* context,
                                     const OpenLaneRequest* request,
                                     OpenLaneResponse* response) override;
  // A primary's stream to this backup (ShardStore::Replicate): each
  // request's entries are applied on the replication thread, then answered
  // with applied_through; a refusal is answered with `error` and ends the
  // stream.
  grpc::ServerBidiReactor<ReplicateRequest, ReplicateResponse>* Replicate(
      grpc::CallbackServerContext* context) override;
  // Runs on the slow calls' thread (a promotion waits for the entry being
  // applied).
  grpc::ServerUnaryReactor* ChangeReplica(grpc::CallbackServerContext* context,
                                          const ChangeReplicaRequest* request,
                                          ChangeReplicaResponse* response) override;

 private:
  friend class PushPullReactor;
  friend class PullReactor;
  friend class ReplicateReactor;

  // LaneServer.
  absl::StatusOr<std::unique_ptr<LaneServer::Connection>> Serve(
      UniqueFd socket, std::function<void()> ended) override;

  ShardStore& store_;
  const ParameterServerServiceOptions options_;
  LaneRegistry* const lanes_;
  internal::SerialExecutor slow_calls_;
  // Applies Replicate streams' entries: a backup applies one entry at a
  // time, and a stalled one (paused for a restore) holds up no gRPC thread.
  internal::SerialExecutor replication_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_PARAMETER_SERVER_SERVICE_H_
