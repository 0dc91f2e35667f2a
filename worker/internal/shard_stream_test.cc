#include "worker/internal/shard_stream.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/net/testing/reserved_port.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "protos/parameter_server.grpc.pb.h"
#include "server/ps/in_process_shard.h"
#include "server/ps/testing/wired_shard.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

using ::testing::HasSubstr;

// A real shard holding job-1's "b" [3] and "w" [2] (zeros, SGD), whose
// answers are held back by `answer_delay` on their way.
std::unique_ptr<WiredShard> StartShard(absl::Duration answer_delay = absl::ZeroDuration()) {
  absl::StatusOr<std::unique_ptr<WiredShard>> shard = WiredShard::Start();
  EXPECT_TRUE(shard.ok()) << shard.status();
  if (!shard.ok()) return nullptr;
  EXPECT_TRUE((*shard)
                  ->Create(DenseVariablesRequest("job-1", 0, 1, 1, 0.1f,
                                                 {{"b", Shape({3})}, {"w", Shape({2})}}))
                  .ok());
  (*shard)->wire().DelayAnswers(answer_delay);
  return *std::move(shard);
}

// Longer than any test runs: the shard seems never to answer.
constexpr absl::Duration kNever = absl::Minutes(10);

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

// One push of `values` to `name` in `messages` messages.
std::vector<OutgoingRequest> PushOf(uint64_t sequence, const std::vector<float>& values,
                                    int messages, const std::string& name = "b") {
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
  gradient->set_name(name);
  DenseTensor* dense = gradient->mutable_dense();
  dense->set_dtype(DATA_TYPE_FLOAT32);
  dense->mutable_shape()->add_dims(static_cast<int64_t>(values.size()));
  dense->set_data(values.data(), values.size() * sizeof(float));
  return requests;
}

absl::Time Soon() { return absl::Now() + absl::Seconds(20); }

TEST(ShardStreamTest, ExchangesInFlightAtOnceAreAnsweredByTagOnOneStream) {
  std::unique_ptr<WiredShard> shard = StartShard();
  ASSERT_NE(shard, nullptr);
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(shard->address()), "ps/0");

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
  EXPECT_EQ(shard->wire().streams_opened(), 1);
  EXPECT_FALSE(stream->broken());
  EXPECT_EQ(shard->Ledger("job-1").applied_pushes(), 1);

  stream->Break(absl::CancelledError("done"));
  stream->WaitUntilDone();
}

TEST(ShardStreamTest, APushPartRefusedBeforeItWasAllSentIsEndedAndTheStreamGoesOn) {
  std::unique_ptr<WiredShard> shard = StartShard();
  ASSERT_NE(shard, nullptr);
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(shard->address()), "ps/0");

  // A variable the job does not have: the shard refuses the part at its
  // first message. Far more messages than can go out before the refusal
  // comes back.
  constexpr int kMessages = 20000;
  std::vector<OutgoingRequest> push = PushOf(1, {1, 1, 1}, kMessages, "x");
  absl::StatusOr<std::vector<IncomingAnswer>> refused = stream->Wait(*stream->Start(&push), Soon());
  ASSERT_TRUE(refused.ok()) << refused.status();
  ASSERT_EQ(refused->size(), 1u);
  EXPECT_EQ(refused->back().message().push().outcome(), PUSH_OUTCOME_REJECTED);
  push.clear();  // the caller may drop what the refused push borrowed

  // The shard reads a stream in order: this pull's answer comes after the
  // refused part was ended, short of its remaining messages.
  std::vector<OutgoingRequest> pull = PullOf("b");
  ASSERT_TRUE(stream->Wait(*stream->Start(&pull), Soon()).ok());
  const std::vector<WirePush> pushes = shard->wire().pushes();
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0].answer.outcome(), PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(pushes[0].parts_ended, 1);
  EXPECT_LT(pushes[0].messages, kMessages);
  EXPECT_EQ(shard->wire().streams_opened(), 1);
  EXPECT_EQ(shard->Ledger("job-1").applied_pushes(), 0);
  stream->Break(absl::CancelledError("done"));
  stream->WaitUntilDone();
}

TEST(ShardStreamTest, ADeadlinePassedBreaksTheStreamAndFailsEveryExchangeOnIt) {
  std::unique_ptr<WiredShard> shard = StartShard(kNever);
  ASSERT_NE(shard, nullptr);
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(shard->address()), "ps/3");
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
  std::unique_ptr<WiredShard> shard = StartShard(kNever);
  ASSERT_NE(shard, nullptr);
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(shard->address()), "ps/1");
  std::vector<OutgoingRequest> pull = PullOf("b");
  std::shared_ptr<StreamExchange> exchange = stream->Start(&pull);
  shard->Shutdown();
  absl::StatusOr<std::vector<IncomingAnswer>> answers = stream->Wait(*exchange, Soon());
  EXPECT_TRUE(absl::IsUnavailable(answers.status())) << answers.status();
  EXPECT_THAT(std::string(answers.status().message()), HasSubstr("ps/1"));
  EXPECT_TRUE(stream->broken());
  stream->WaitUntilDone();
}

TEST(ShardStreamTest, BreakFailsExchangesInFlightWithItsReason) {
  std::unique_ptr<WiredShard> shard = StartShard(kNever);
  ASSERT_NE(shard, nullptr);
  std::shared_ptr<ShardStream> stream = ShardStream::Open(ChannelTo(shard->address()), "ps/0");
  std::vector<OutgoingRequest> pull = PullOf("b");
  std::shared_ptr<StreamExchange> exchange = stream->Start(&pull);
  stream->Break(absl::CancelledError("the ps client was cancelled"));
  EXPECT_TRUE(absl::IsCancelled(stream->Wait(*exchange, Soon()).status()));
  stream->WaitUntilDone();
  EXPECT_TRUE(stream->done());
}

TEST(ShardStreamTest, AnUnreachableShardFailsWithUnavailable) {
  // A port bound and never listening refuses every connection, and no
  // other socket of the machine takes it while it is held.
  absl::StatusOr<testing_net::ReservedPort> port = testing_net::ReservedPort::OnLoopback();
  ASSERT_TRUE(port.ok()) << port.status();
  std::shared_ptr<ShardStream> stream =
      ShardStream::Open(ChannelTo(absl::StrCat("127.0.0.1:", port->port())), "ps/2");
  std::vector<OutgoingRequest> pull = PullOf("b");
  absl::StatusOr<std::vector<IncomingAnswer>> answers = stream->Wait(*stream->Start(&pull), Soon());
  EXPECT_TRUE(absl::IsUnavailable(answers.status())) << answers.status();
  // The reason gRPC gave, not just that the stream ended.
  EXPECT_THAT(std::string(answers.status().message()), HasSubstr("ps/2: failed to connect"));
  stream->WaitUntilDone();
}

TEST(ShardStreamTest, OnceDoneTheOwnerHoldsItsLastReferenceAndReleasesItsChannel) {
  // Were the stream's last reference dropped by its OnDone, its channel
  // could be gRPC's last one, released on a gRPC callback thread: gRPC
  // then shuts its callback queue down from that very thread and the
  // process aborts. Once WaitUntilDone has returned, the owner's reference
  // is the last and dropping it releases the channel at once, here. Many
  // times over: OnDone and the waiter race each time.
  std::unique_ptr<WiredShard> shard = StartShard();
  ASSERT_NE(shard, nullptr);
  for (int i = 0; i < 20; ++i) {
    std::shared_ptr<grpc::Channel> channel = ChannelTo(shard->address());
    const std::weak_ptr<grpc::Channel> held = channel;
    std::shared_ptr<ShardStream> stream = ShardStream::Open(std::move(channel), "ps/0");
    stream->Break(absl::CancelledError("closing"));
    stream->WaitUntilDone();
    EXPECT_EQ(stream.use_count(), 1) << "stream " << i;
    stream.reset();
    EXPECT_TRUE(held.expired()) << "stream " << i;
  }
}

}  // namespace
}  // namespace internal
}  // namespace worker
}  // namespace pstrain
