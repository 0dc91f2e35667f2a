// pstrain-ps as a user runs it: a real process on loopback, driven through
// its gRPC API, checkpointing to a real folder.

#include <sys/stat.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "client/binary_locator.h"
#include "common/daemon/ready_file.h"
#include "common/net/http_get.h"
#include "common/process/child_process.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {
namespace {

constexpr char kJob[] = "ps-process-test";

DenseTensor FloatTensor(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  DenseTensor tensor;
  tensor.set_dtype(DATA_TYPE_FLOAT32);
  for (int64_t dim : dims) tensor.mutable_shape()->add_dims(dim);
  tensor.set_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return tensor;
}

std::vector<float> Floats(const DenseTensor& tensor) {
  std::vector<float> values(tensor.data().size() / sizeof(float));
  std::memcpy(values.data(), tensor.data().data(), tensor.data().size());
  return values;
}

class PsProcessTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::TempDir() + "/ps_root";
    ::mkdir(root_.c_str(), 0755);
    absl::StatusOr<std::string> program = LocateBinary("pstrain-ps", "");
    ASSERT_TRUE(program.ok()) << program.status();
    const std::string ready = testing::TempDir() + "/ps_process.ready";
    std::remove(ready.c_str());
    auto child = ChildProcess::Start({*program,
                                      {"--coordinator_address=127.0.0.1:1",
                                       "--checkpoint_root=" + root_, "--ready_file=" + ready},
                                      {},
                                      testing::TempDir() + "/ps_process.log"});
    ASSERT_TRUE(child.ok()) << child.status();
    process_ = *std::move(child);
    absl::StatusOr<ReadyInfo> info = WaitForReadyFile(ready, absl::Seconds(30));
    ASSERT_TRUE(info.ok()) << info.status();
    info_ = *info;
    stub_ = ParameterServer::NewStub(
        grpc::CreateChannel(info_.at("grpc"), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (process_ != nullptr) {
      EXPECT_TRUE(process_->Stop(absl::Seconds(20)).ok());
    }
  }

  std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    return context;
  }

  // A 2x2 weight, initialised to 1, trained by SGD with learning rate 0.5.
  void CreateWeights() {
    CreateVariablesRequest request;
    request.set_job_id(kJob);
    request.set_shard_index(0);
    request.set_num_shards(1);
    request.set_num_workers(1);
    VariableSpec* weights = request.add_variables();
    weights->set_name("dense/weights");
    weights->set_kind(VARIABLE_KIND_DENSE);
    weights->set_dtype(DATA_TYPE_FLOAT32);
    weights->mutable_shape()->add_dims(2);
    weights->mutable_shape()->add_dims(2);
    weights->mutable_initializer()->set_kind(INITIALIZER_KIND_CONSTANT);
    weights->mutable_initializer()->set_value(1.0f);
    request.mutable_optimizer()->mutable_sgd();
    request.mutable_optimizer()->set_learning_rate(0.5f);
    request.mutable_training()->set_update_mode(UPDATE_MODE_ASYNC);
    CreateVariablesResponse response;
    grpc::Status status = stub_->CreateVariables(Context().get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  PushResult Push(uint64_t sequence, const std::vector<float>& gradient) {
    auto context = Context();
    auto stream = stub_->PushPull(context.get());
    PushPullRequest request;
    request.set_tag(sequence);
    PushRequest* push = request.mutable_push();
    push->set_job_id(kJob);
    push->mutable_id()->set_worker(0);
    push->mutable_id()->set_incarnation(7);
    push->mutable_id()->set_sequence(sequence);
    push->set_end_of_push(true);
    push->set_examples(1);
    NamedTensor* named = push->add_gradients();
    named->set_name("dense/weights");
    *named->mutable_dense() = FloatTensor({2, 2}, gradient);
    EXPECT_TRUE(stream->Write(request));
    stream->WritesDone();
    PushPullResponse response;
    EXPECT_TRUE(stream->Read(&response));
    EXPECT_EQ(response.tag(), sequence);
    EXPECT_TRUE(stream->Finish().ok());
    return response.push();
  }

  std::vector<float> PullWeights() {
    PullRequest request;
    request.set_job_id(kJob);
    request.add_names("dense/weights");
    PullResponse response;
    grpc::Status status = stub_->Pull(Context().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    if (response.values_size() != 1) return {};
    return Floats(response.values(0).dense());
  }

  std::string root_;
  std::unique_ptr<ChildProcess> process_;
  ReadyInfo info_;
  std::unique_ptr<ParameterServer::Stub> stub_;
};

TEST_F(PsProcessTest, AppliesEachPushOnceAndServesTheResult) {
  CreateWeights();
  EXPECT_EQ(PullWeights(), std::vector<float>({1, 1, 1, 1}));

  EXPECT_EQ(Push(1, {2, 0, -2, 4}).outcome(), PUSH_OUTCOME_APPLIED);
  // w -= 0.5 * g
  EXPECT_EQ(PullWeights(), std::vector<float>({0, 1, 2, -1}));

  // The same push again (a retry after a lost reply) changes nothing.
  EXPECT_EQ(Push(1, {2, 0, -2, 4}).outcome(), PUSH_OUTCOME_DUPLICATE);
  EXPECT_EQ(PullWeights(), std::vector<float>({0, 1, 2, -1}));

  absl::StatusOr<std::string> metrics = HttpGet(info_.at("metrics"), "/metrics", absl::Seconds(10));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NE(metrics->find("pstrain_ps_"), std::string::npos) << *metrics;
}

TEST_F(PsProcessTest, SnapshotRestoresBitExactAndRefusesPathsOutsideTheRoot) {
  CreateWeights();
  ASSERT_EQ(Push(1, {2, 0, -2, 4}).outcome(), PUSH_OUTCOME_APPLIED);

  SnapshotRequest snapshot;
  snapshot.set_job_id(kJob);
  snapshot.set_path(root_ + "/shard-0");
  snapshot.set_global_step(1);
  SnapshotResponse saved;
  grpc::Status status = stub_->Snapshot(Context().get(), snapshot, &saved);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(saved.bytes(), 0);

  // Train on, then go back to the snapshot.
  ASSERT_EQ(Push(2, {1, 1, 1, 1}).outcome(), PUSH_OUTCOME_APPLIED);
  RestoreRequest restore;
  restore.set_job_id(kJob);
  restore.set_path(saved.path());
  restore.set_expected_bytes(saved.bytes());
  restore.set_expected_crc32c(saved.crc32c());
  RestoreResponse restored;
  status = stub_->Restore(Context().get(), restore, &restored);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(PullWeights(), std::vector<float>({0, 1, 2, -1}));

  snapshot.set_path("/etc/pstrain-shard");
  status = stub_->Snapshot(Context().get(), snapshot, &saved);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("/etc/pstrain-shard"), std::string::npos)
      << status.error_message();
}

TEST_F(PsProcessTest, UnknownJobAndVariableAreRefusedClearly) {
  CreateWeights();
  PullRequest request;
  request.set_job_id(kJob);
  request.add_names("dense/bias");
  PullResponse response;
  grpc::Status status = stub_->Pull(Context().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(status.error_message().find("dense/bias"), std::string::npos) << status.error_message();

  request.set_job_id("another-job");
  request.set_names(0, "dense/weights");
  status = stub_->Pull(Context().get(), request, &response);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.error_message().find("another-job"), std::string::npos)
      << status.error_message();
}

}  // namespace
}  // namespace pstrain
