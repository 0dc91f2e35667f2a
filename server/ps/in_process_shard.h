#ifndef PSTRAIN_SERVER_PS_IN_PROCESS_SHARD_H_
#define PSTRAIN_SERVER_PS_IN_PROCESS_SHARD_H_

// One parameter-server shard running inside the calling process, served as
// pstrain-ps serves it (store, service, gRPC server; shared-memory lanes
// when asked) on 127.0.0.1 at a port of its own. For benchmarks and tests
// that reach a real shard through the worker's real client without
// starting a process.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock/clock.h"
#include "common/tensor/tensor_shape.h"
#include "grpcpp/grpcpp.h"
#include "prometheus/registry.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/lane_registry.h"
#include "server/ps/parameter_server_service.h"
#include "server/ps/shard_store.h"

namespace pstrain {

struct InProcessShardOptions {
  ShardStoreOptions store;
  ParameterServerServiceOptions service;
  // Offer shared-memory lanes (pstrain-ps --shm). Default off.
  bool lanes = false;
  // The server's largest message. Default 16 MiB, pstrain-ps's default.
  int max_message_bytes = 16 << 20;
};

// Not thread-safe to construct or destroy; the store and the service are as
// thread-safe as they document.
class InProcessShard {
 public:
  // Internal: the server cannot listen on 127.0.0.1; the errors of
  // LaneRegistry::Start when lanes are asked for.
  static absl::StatusOr<std::unique_ptr<InProcessShard>> Start(InProcessShardOptions options = {});
  // Shuts the server down at once, calls in flight cancelled.
  ~InProcessShard();

  InProcessShard(const InProcessShard&) = delete;
  InProcessShard& operator=(const InProcessShard&) = delete;

  // "127.0.0.1:<port>".
  const std::string& address() const { return address_; }
  ShardStore& store() { return *store_; }
  // Null when lanes are off.
  LaneRegistry* lanes() { return lanes_.get(); }
  // The shard's Prometheus metrics (pstrain_ps_*).
  const prometheus::Registry& metrics() const { return metrics_; }

 private:
  InProcessShard() = default;

  RealClock clock_;
  prometheus::Registry metrics_;
  std::unique_ptr<ShardStore> store_;
  std::unique_ptr<LaneRegistry> lanes_;
  std::unique_ptr<ParameterServerService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

// A CreateVariablesRequest for job `job_id` on shard `shard_index` of
// `num_shards`: dense float32 variables `variables` (name, shape),
// zero-initialised, SGD at `learning_rate`, pushed to by `num_workers`.
CreateVariablesRequest DenseVariablesRequest(
    const std::string& job_id, int shard_index, int num_shards, int num_workers,
    float learning_rate, const std::vector<std::pair<std::string, Shape>>& variables);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_IN_PROCESS_SHARD_H_
