#include "server/coordinator/testing/in_process_coordinator.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/status/grpc_status.h"
#include "glog/logging.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/coordinator/grpc_shard_client.h"

namespace pstrain {
namespace coordinator {
namespace {

CoordinatorOptions WithTestRoot(CoordinatorOptions options) {
  if (options.checkpoint_root == CoordinatorOptions().checkpoint_root) {
    options.checkpoint_root = JoinPath(::testing::TempDir(), "in_process_coordinator");
  }
  return options;
}

std::vector<std::string> InMemoryAddresses(int num_shards) {
  std::vector<std::string> addresses;
  for (int i = 0; i < num_shards; ++i) addresses.push_back(absl::StrCat("ps-", i, ".in-process:1"));
  return addresses;
}

}  // namespace

InProcessCoordinator::InProcessCoordinator(CoordinatorOptions options, int num_shards)
    : options_(WithTestRoot(std::move(options))), planner_(std::make_unique<FakePlanner>()) {
  for (const std::string& address : InMemoryAddresses(num_shards)) {
    shards_.push_back(std::make_unique<FakeShard>(env_, address));
  }
  Start();
}

InProcessCoordinator::InProcessCoordinator(CoordinatorOptions options, Planning planning)
    : options_(WithTestRoot(std::move(options))),
      planner_(planning == Planning::kFromSpec
                   ? std::unique_ptr<JobPlanner>(std::make_unique<ModelJobPlanner>())
                   : std::make_unique<FakePlanner>()) {
  Start();
}

InProcessCoordinator::~InProcessCoordinator() { Stop(); }

absl::StatusOr<Assignment> InProcessCoordinator::AwaitAssignment(const TaskId& task,
                                                                 uint64_t incarnation,
                                                                 absl::Duration wait) {
  std::unique_ptr<ClusterService::Stub> cluster =
      ClusterService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  GetAssignmentRequest request;
  *request.mutable_task() = task;
  request.set_incarnation(incarnation);
  request.set_wait_ms(absl::ToInt64Milliseconds(wait));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + wait));
  Assignment assignment;
  const grpc::Status status = cluster->GetAssignment(&context, request, &assignment);
  if (!status.ok()) return FromGrpcStatus(status);
  return assignment;
}

void InProcessCoordinator::Start() {
  const absl::Status created = CreateDirs(env_, options_.checkpoint_root);
  CHECK(created.ok()) << created;
  ShardClientFactory shard_clients;
  if (shards_.empty()) {
    shard_clients = [this](const std::string& address) -> std::unique_ptr<ShardClient> {
      return std::make_unique<GrpcShardClient>(address, shard_clock_);
    };
  } else {
    std::vector<FakeShard*> shards;
    for (const std::unique_ptr<FakeShard>& shard : shards_) shards.push_back(shard.get());
    shard_clients = FakeShardClients(std::move(shards));
  }
  absl::StatusOr<std::unique_ptr<Coordinator>> coordinator = Coordinator::Create(
      clock_, env_, *planner_, std::move(shard_clients), &metrics_, options_, [] {});
  CHECK(coordinator.ok()) << coordinator.status();
  coordinator_ = *std::move(coordinator);
  cluster_service_ = std::make_unique<ClusterServiceImpl>(*coordinator_);
  job_service_ = std::make_unique<JobServiceImpl>(*coordinator_);
  GrpcServerOptions server_options;
  if (!address_.empty()) server_options.listen_address = address_;
  absl::StatusOr<std::unique_ptr<GrpcServer>> server =
      GrpcServer::Start(server_options, {cluster_service_.get(), job_service_.get()});
  CHECK(server.ok()) << server.status();
  server_ = *std::move(server);
  address_ = server_->address();
  coordinator_->Start();
}

void InProcessCoordinator::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(absl::ZeroDuration());
  coordinator_->Stop();
  server_.reset();
  job_service_.reset();
  cluster_service_.reset();
  coordinator_.reset();
}

void InProcessCoordinator::Restart() {
  Stop();
  Start();
}

}  // namespace coordinator
}  // namespace pstrain
