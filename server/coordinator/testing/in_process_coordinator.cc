#include "server/coordinator/testing/in_process_coordinator.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
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
    : InProcessCoordinator(std::move(options), Fakes{num_shards}) {}

InProcessCoordinator::InProcessCoordinator(CoordinatorOptions options, Fakes fakes)
    : options_(WithTestRoot(std::move(options))),
      env_(fakes.env != nullptr ? *fakes.env : posix_),
      on_shutdown_(std::move(fakes.on_shutdown)),
      planner_(std::make_unique<FakePlanner>(fakes.num_records)) {
  for (const std::string& address : InMemoryAddresses(fakes.num_shards)) {
    shards_.push_back(std::make_unique<FakeShard>(env_, address));
  }
  Start();
}

InProcessCoordinator::InProcessCoordinator(CoordinatorOptions options, Planning planning)
    : options_(WithTestRoot(std::move(options))),
      env_(posix_),
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

absl::StatusOr<Assignment> InProcessCoordinator::AwaitBoardAssignment(const TaskId& task,
                                                                      absl::Duration wait) {
  absl::Notification done;
  Assignment got;
  Assignment now;
  const uint64_t id = coordinator_->assignments().Await(
      task, {}, absl::InfiniteFuture(),
      [&](const Assignment& assignment) {
        got = assignment;
        done.Notify();
      },
      &now);
  if (id == 0) return now;
  if (!done.WaitForNotificationWithTimeout(wait)) {
    coordinator_->assignments().Cancel(id);  // answers it, before `got` goes
    return absl::DeadlineExceededError(
        absl::StrCat("no assignment within ", absl::FormatDuration(wait)));
  }
  return got;
}

absl::Status InProcessCoordinator::RegisterShards() {
  for (size_t i = 0; i < shards_.size(); ++i) {
    RegisterRequest request;
    request.mutable_task()->set_type(TASK_TYPE_PS);
    request.mutable_task()->set_index(static_cast<int>(i));
    request.set_incarnation(1);
    request.set_address(shards_[i]->address());
    if (absl::StatusOr<RegisterResponse> registered = coordinator_->Register(request);
        !registered.ok()) {
      return registered.status();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> InProcessCoordinator::SubmitTrainingJob(const TrainingJob& job) {
  SubmitJobRequest submit;
  JobSpec& spec = *submit.mutable_spec();
  spec.set_name("t");
  spec.set_mode(JOB_MODE_TRAIN);
  spec.mutable_model()->mutable_logistic_regression();
  spec.mutable_train_data()->mutable_synthetic_clicks()->set_num_examples(job.num_examples);
  spec.mutable_stop()->set_max_steps(job.max_steps);
  spec.mutable_checkpoint()->set_model_dir(job.model_dir);
  absl::StatusOr<SubmitJobResponse> submitted = coordinator_->SubmitJob(submit);
  if (!submitted.ok()) return submitted.status();
  if (absl::Status registered = RegisterShards(); !registered.ok()) return registered;
  return submitted->job_id();
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
      clock_, env_, *planner_, std::move(shard_clients), &metrics_, options_, on_shutdown_);
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
