#include "worker/internal/shard_stream.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "protos/parameter_server.grpc.pb.h"
#include "worker/testing/fake_parameter_server.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

using ::testing::HasSubstr;

// A shard that reads every request and never answers, until the call ends.
class SilentShard final : public ParameterServer::CallbackService {
 public:
  SilentShard() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  ~SilentShard() override { Shutdown(); }

  void Shutdown() {
    if (server_ == nullptr) return;
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
    server_.reset();
  }
  const std::string& address() const { return address_; }

  grpc::ServerBidiReactor<PushPullRequest, PushPullResponse>* PushPull(
      grpc::CallbackServerContext* /*context*/) override {
    class Reader : public grpc::ServerBidiReactor<PushPullRequest, PushPullResponse> {
     public:
      Reader() { StartRead(&request_); }
      void OnReadDone(bool ok) override {
        if (ok) {
          StartRead(&request_);
        } else {
          Finish(grpc::Status::OK);
        }
      }
      void OnDone() override { delete this; }

     private:
      PushPullRequest request_;
    };
    return new Reader;
  }

 private:
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

std::shared_ptr<grpc::Channel> ChannelTo(const std::string& address) {
  return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
}

std::vector<OutgoingRequest> PullOf(const std::string& name) {
  std::vector<OutgoingRequest> requests(1);
  PullRequest* pull = requests[0].message.mutable_pull();
  pull->set_job_id("job-1");
  pull->add_names(name);
  return requests;
}

// One push of `values` to "b" in `messages` messages.
std::vector<OutgoingRequest> PushOf(uint64_t sequence, const std::vector<float>& values,
                                    int messages) {
  std::vector<OutgoingRequest> requests(messages);
  for (int m = 0; m < messages; ++m) {
    PushRequest* push = requests[m].message.mutable_push();
    push->set_job_id("job-1");
    push->mutable_id()->set_worker(0);
    push->mutable_id()->set_incarnation(5);
    push->mutable_id()->set_sequence(sequence);
    push->set_end_of_push(m + 1 == messages);
  }
  NamedTensor* gradient = requests[0].message.mutable_push()->add_gradients();
  gradient->set_name("b");
  DenseTensor* dense = gradient->mutable_dense();
  dense->set_dtype(DATA_TYPE_FLOAT32);
  dense->mutable_shape()->add_dims(static_cast<int64_t>(values.size()));
  dense->set_data(values.data(), values.size() * sizeof(float));
  return requests;
}

absl::Time Soon() { return absl::Now() + absl::Seconds(20); }

TEST(ShardStreamTest, ExchangesInFlightAtOnceAreAnsweredByTagOnOneStream) {
  FakeParameterServer shard(0, 1);
  shard.AddDense("b", {3}, {1, 2, 3});
  shard.AddDense("w", {2}, {5, 6});
  ASSERT_TRUE(shard.Start().ok());
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(shard.address()), "ps/0");

  std::vector<OutgoingRequest> pull_b = PullOf("b"), pull_w = PullOf("w");
  std::vector<OutgoingRequest> push = PushOf(1, {10, 10, 10}, 3);
  std::shared_ptr<StreamExchange> first = stream->Start(&pull_b);
  std::shared_ptr<StreamExchange> pushed = stream->Start(&push);
  std::shared_ptr<StreamExchange> second = stream->Start(&pull_w);

  // Waited for in another order than started.
  absl::StatusOr<std::vector<IncomingAnswer>> w = stream->Wait(*second, Soon());
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->size(), 1u);
  EXPECT_EQ(w->back().message().pull().values(0).name(), "w");
  absl::StatusOr<std::vector<IncomingAnswer>> p = stream->Wait(*pushed, Soon());
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->size(), 1u);  // one answer for the push's three messages
  EXPECT_EQ(p->back().message().push().outcome(), PUSH_OUTCOME_APPLIED);
  absl::StatusOr<std::vector<IncomingAnswer>> b = stream->Wait(*first, Soon());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->back().message().pull().values(0).name(), "b");

  // The next calls ride the same stream.
  std::vector<OutgoingRequest> again = PullOf("b");
  ASSERT_TRUE(stream->Wait(*stream->Start(&again), Soon()).ok());
  EXPECT_EQ(shard.streams_opened(), 1);
  EXPECT_FALSE(stream->broken());
  EXPECT_EQ(shard.applied(), 1);

  stream->Break(absl::CancelledError("done"));
  stream->WaitUntilDone();
}

TEST(ShardStreamTest, APushPartRefusedBeforeItWasAllSentIsEndedAndTheStreamGoesOn) {
  FakeParameterServer shard(0, 1);
  shard.AddDense("b", {3}, {1, 2, 3});
  ASSERT_TRUE(shard.Start().ok());
  shard.RefuseEarly(1, absl::InvalidArgumentError("no variable \"x\""));
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(shard.address()), "ps/0");

  // Far more messages than can go out before the refusal of the first
  // comes back.
  constexpr int kMessages = 20000;
  std::vector<OutgoingRequest> push = PushOf(1, {1, 1, 1}, kMessages);
  absl::StatusOr<std::vector<IncomingAnswer>> refused = stream->Wait(*stream->Start(&push), Soon());
  ASSERT_TRUE(refused.ok()) << refused.status();
  ASSERT_EQ(refused->size(), 1u);
  EXPECT_EQ(refused->back().message().push().outcome(), PUSH_OUTCOME_REJECTED);
  push.clear();  // the caller may drop what the refused push borrowed

  // The shard reads a stream in order: this pull's answer comes after the
  // refused part was ended, short of its remaining messages.
  std::vector<OutgoingRequest> pull = PullOf("b");
  ASSERT_TRUE(stream->Wait(*stream->Start(&pull), Soon()).ok());
  EXPECT_EQ(shard.refused_parts_ended(), 1);
  EXPECT_LT(shard.refused_messages(), kMessages);
  EXPECT_EQ(shard.streams_opened(), 1);
  stream->Break(absl::CancelledError("done"));
  stream->WaitUntilDone();
}

TEST(ShardStreamTest, ADeadlinePassedBreaksTheStreamAndFailsEveryExchangeOnIt) {
  SilentShard shard;
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(shard.address()), "ps/3");
  std::vector<OutgoingRequest> one = PullOf("b"), two = PullOf("w");
  std::shared_ptr<StreamExchange> first = stream->Start(&one);
  std::shared_ptr<StreamExchange> second = stream->Start(&two);

  absl::StatusOr<std::vector<IncomingAnswer>> late =
      stream->Wait(*first, absl::Now() + absl::Milliseconds(200));
  EXPECT_TRUE(absl::IsUnavailable(late.status())) << late.status();
  EXPECT_THAT(std::string(late.status().message()), HasSubstr("ps/3"));
  EXPECT_THAT(std::string(late.status().message()), HasSubstr("call deadline"));
  // The other exchange fails at once, and the stream takes no new one.
  const absl::Time before = absl::Now();
  EXPECT_TRUE(absl::IsUnavailable(stream->Wait(*second, Soon()).status()));
  std::vector<OutgoingRequest> three = PullOf("b");
  EXPECT_TRUE(absl::IsUnavailable(stream->Wait(*stream->Start(&three), Soon()).status()));
  EXPECT_LT(absl::Now() - before, absl::Seconds(5));
  EXPECT_TRUE(stream->broken());
  stream->WaitUntilDone();
}

TEST(ShardStreamTest, AShardThatGoesAwayFailsItsExchangesWithUnavailable) {
  SilentShard shard;
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(shard.address()), "ps/1");
  std::vector<OutgoingRequest> pull = PullOf("b");
  std::shared_ptr<StreamExchange> exchange = stream->Start(&pull);
  shard.Shutdown();
  absl::StatusOr<std::vector<IncomingAnswer>> answers = stream->Wait(*exchange, Soon());
  EXPECT_TRUE(absl::IsUnavailable(answers.status())) << answers.status();
  EXPECT_THAT(std::string(answers.status().message()), HasSubstr("ps/1"));
  EXPECT_TRUE(stream->broken());
  stream->WaitUntilDone();
}

TEST(ShardStreamTest, BreakFailsExchangesInFlightWithItsReason) {
  SilentShard shard;
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(shard.address()), "ps/0");
  std::vector<OutgoingRequest> pull = PullOf("b");
  std::shared_ptr<StreamExchange> exchange = stream->Start(&pull);
  stream->Break(absl::CancelledError("the ps client was cancelled"));
  EXPECT_TRUE(absl::IsCancelled(stream->Wait(*exchange, Soon()).status()));
  stream->WaitUntilDone();
  EXPECT_TRUE(stream->done());
}

TEST(ShardStreamTest, AnUnreachableShardFailsWithUnavailable) {
  SilentShard shard;
  const std::string address = shard.address();
  shard.Shutdown();
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(address), "ps/2");
  std::vector<OutgoingRequest> pull = PullOf("b");
  absl::StatusOr<std::vector<IncomingAnswer>> answers = stream->Wait(*stream->Start(&pull), Soon());
  EXPECT_TRUE(absl::IsUnavailable(answers.status())) << answers.status();
  // The reason gRPC gave, not just that the stream ended.
  EXPECT_THAT(std::string(answers.status().message()), HasSubstr("ps/2: failed to connect"));
  stream->WaitUntilDone();
}

}  // namespace
}  // namespace internal
}  // namespace worker
}  // namespace pstrain
