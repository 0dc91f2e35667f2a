#include "server/ps/in_process_shard.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace pstrain {

absl::StatusOr<std::unique_ptr<InProcessShard>> InProcessShard::Start(
    InProcessShardOptions options) {
  std::unique_ptr<InProcessShard> shard(new InProcessShard());
  shard->store_ = std::make_unique<ShardStore>(options.store, shard->clock_, shard->metrics_);
  if (options.lanes) {
    absl::StatusOr<std::unique_ptr<LaneRegistry>> lanes = LaneRegistry::Start();
    if (!lanes.ok()) return lanes.status();
    shard->lanes_ = *std::move(lanes);
  }
  shard->service_ = std::make_unique<ParameterServerService>(*shard->store_, options.service,
                                                             shard->lanes_.get());
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.RegisterService(shard->service_.get());
  shard->server_ = builder.BuildAndStart();
  if (shard->server_ == nullptr || port == 0) {
    return absl::InternalError("cannot start a shard's gRPC server on 127.0.0.1");
  }
  shard->address_ = absl::StrCat("127.0.0.1:", port);
  return shard;
}

InProcessShard::~InProcessShard() {
  if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
}

CreateVariablesRequest DenseVariablesRequest(
    const std::string& job_id, int shard_index, int num_shards, int num_workers,
    float learning_rate, const std::vector<std::pair<std::string, Shape>>& variables) {
  CreateVariablesRequest request;
  request.set_job_id(job_id);
  request.set_shard_index(shard_index);
  request.set_num_shards(num_shards);
  request.set_num_workers(num_workers);
  request.mutable_optimizer()->set_learning_rate(learning_rate);
  for (const auto& [name, shape] : variables) {
    VariableSpec* v = request.add_variables();
    v->set_name(name);
    v->set_kind(VARIABLE_KIND_DENSE);
    v->set_dtype(DATA_TYPE_FLOAT32);
    for (int64_t d : shape.dims()) v->mutable_shape()->add_dims(d);
  }
  return request;
}

}  // namespace pstrain
