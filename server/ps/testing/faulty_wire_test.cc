#include "server/ps/testing/faulty_wire.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "protos/parameter_server.grpc.pb.h"
#include "server/ps/in_process_shard.h"
#include "server/ps/testing/wired_shard.h"

namespace pstrain {
namespace {

constexpr char kJob[] = "job-1";

// A push of one step of 1s to dense "b" [3], in one message.
PushPullRequest Push(uint64_t sequence) {
  PushPullRequest request;
  request.set_tag(sequence);
  PushRequest& push = *request.mutable_push();
  push.set_job_id(kJob);
  push.mutable_id()->set_worker(0);
  push.mutable_id()->set_incarnation(3);
  push.mutable_id()->set_sequence(sequence);
  push.set_end_of_push(true);
  push.set_examples(4);
  NamedTensor& gradient = *push.add_gradients();
  gradient.set_name("b");
  DenseTensor& dense = *gradient.mutable_dense();
  dense.set_dtype(DATA_TYPE_FLOAT32);
  dense.mutable_shape()->add_dims(3);
  const float values[] = {1, 1, 1};
  dense.set_data(values, sizeof(values));
  return request;
}

// A real shard behind the wire, and a client of the wire; job-1 is set up
// over the wire.
class FaultyWireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<WiredShard>> shard = WiredShard::Start();
    ASSERT_TRUE(shard.ok()) << shard.status();
    shard_ = *std::move(shard);
    stub_ = ParameterServer::NewStub(
        grpc::CreateChannel(shard_->address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    CreateVariablesResponse created;
    const grpc::Status status = stub_->CreateVariables(
        &context, DenseVariablesRequest(kJob, 0, 1, 1, 0.5f, {{"b", Shape({3})}}), &created);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  // Sends `request` on a new stream; its answer, or the stream's status.
  absl::StatusOr<PushPullResponse> Exchange(const PushPullRequest& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    std::unique_ptr<grpc::ClientReaderWriter<PushPullRequest, PushPullResponse>> stream =
        stub_->PushPull(&context);
    stream->Write(request);
    stream->WritesDone();
    PushPullResponse answer;
    const bool answered = stream->Read(&answer);
    while (stream->Read(&answer)) {
    }
    const grpc::Status status = stream->Finish();
    if (!status.ok())
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    if (!answered) return absl::InternalError("the stream ended without an answer");
    return answer;
  }

  std::unique_ptr<WiredShard> shard_;
  std::unique_ptr<ParameterServer::Stub> stub_;
};

TEST_F(FaultyWireTest, ForwardsCallsToTheShardAndRecordsThePushes) {
  absl::StatusOr<PushPullResponse> answer = Exchange(Push(1));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->tag(), 1u);
  EXPECT_EQ(answer->push().outcome(), PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(shard_->Dense(kJob, "b"), std::vector<float>({-0.5f, -0.5f, -0.5f}));

  const std::vector<WirePush> pushes = shard_->wire().pushes();
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0].id.sequence(), 1u);
  EXPECT_EQ(pushes[0].messages, 1);
  EXPECT_EQ(pushes[0].parts_ended, 1);
  EXPECT_EQ(pushes[0].examples, 4);
  EXPECT_EQ(pushes[0].answer.outcome(), PUSH_OUTCOME_APPLIED);
  EXPECT_FALSE(pushes[0].answer_dropped);
  EXPECT_EQ(shard_->wire().streams_opened(), 1);
}

TEST_F(FaultyWireTest, ADroppedAnswerEndsTheStreamAfterTheShardAppliedThePush) {
  shard_->wire().DropAnswerOf(1);
  absl::StatusOr<PushPullResponse> lost = Exchange(Push(1));
  EXPECT_TRUE(absl::IsUnavailable(lost.status())) << lost.status();
  EXPECT_EQ(shard_->Ledger(kJob).applied_pushes(), 1);

  // Once: the retry is answered, as a duplicate.
  absl::StatusOr<PushPullResponse> retried = Exchange(Push(1));
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_EQ(retried->push().outcome(), PUSH_OUTCOME_DUPLICATE);
  const std::vector<WirePush> pushes = shard_->wire().pushes();
  ASSERT_EQ(pushes.size(), 2u);
  EXPECT_TRUE(pushes[0].answer_dropped);
  EXPECT_EQ(pushes[0].answer.outcome(), PUSH_OUTCOME_APPLIED);
  EXPECT_FALSE(pushes[1].answer_dropped);
  EXPECT_EQ(shard_->Ledger(kJob).applied_pushes(), 1);
}

TEST_F(FaultyWireTest, ARefusedPushNeverReachesTheShard) {
  shard_->wire().RefusePush(2, absl::ResourceExhaustedError("the shard is full"));
  absl::StatusOr<PushPullResponse> refused = Exchange(Push(2));
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->tag(), 2u);
  EXPECT_EQ(refused->push().outcome(), PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(refused->push().status().code(),
            static_cast<int>(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(refused->push().status().message(), "the shard is full");
  EXPECT_EQ(shard_->Ledger(kJob).applied_pushes(), 0);
  // Other pushes go through.
  absl::StatusOr<PushPullResponse> applied = Exchange(Push(3));
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->push().outcome(), PUSH_OUTCOME_APPLIED);
}

TEST_F(FaultyWireTest, DelayedAnswersArriveNoSoonerThanTheDelay) {
  shard_->wire().DelayAnswers(absl::Milliseconds(200));
  const absl::Time start = absl::Now();
  absl::StatusOr<PushPullResponse> answer = Exchange(Push(1));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->push().outcome(), PUSH_OUTCOME_APPLIED);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
}

TEST_F(FaultyWireTest, AfterShutdownTheShardCannotBeReached) {
  shard_->Shutdown();
  absl::StatusOr<PushPullResponse> answer = Exchange(Push(1));
  EXPECT_TRUE(absl::IsUnavailable(answer.status())) << answer.status();
  EXPECT_EQ(shard_->Ledger(kJob).applied_pushes(), 0);
}

}  // namespace
}  // namespace pstrain
