#include "worker/overlapped_push.h"

#include <memory>
#include <vector>

#include "common/clock/fake_clock.h"
#include "common/random/random_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/ps/in_process_shard.h"
#include "server/ps/testing/wired_shard.h"

namespace pstrain {
namespace worker {
namespace {

VariableDef Dense(const std::string& name, int64_t size) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(VARIABLE_KIND_DENSE);
  def.spec.set_dtype(DATA_TYPE_FLOAT32);
  def.spec.mutable_shape()->add_dims(size);
  return def;
}

PushOrigin Origin(int64_t begin, int64_t end) {
  PushOrigin origin;
  origin.set_lease_id(5);
  origin.mutable_records()->set_begin(begin);
  origin.mutable_records()->set_end(end);
  return origin;
}

// One real shard holding dense "w" of 4 floats for job-1 (zeros, SGD at
// learning rate 1), and a client of it.
class OverlappedPushTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<WiredShard>> shard = WiredShard::Start();
    ASSERT_TRUE(shard.ok()) << shard.status();
    shard_ = *std::move(shard);
    ASSERT_TRUE(
        shard_->Create(DenseVariablesRequest("job-1", 0, 1, 1, 1.0f, {{"w", Shape({4})}})).ok());
    google::protobuf::RepeatedPtrField<VariablePlacement> placements;
    placements.Add()->set_name("w");
    absl::StatusOr<ShardSlicer> slicer = ShardSlicer::Create({Dense("w", 4)}, placements, 1);
    ASSERT_TRUE(slicer.ok()) << slicer.status();
    ParameterServerClientOptions options;
    options.job_id = "job-1";
    options.incarnation = 9;
    absl::StatusOr<std::unique_ptr<ParameterServerClient>> client = ParameterServerClient::Create(
        {shard_->address()}, *std::move(slicer), options, clock_, random_, nullptr);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  // "w" as pulled.
  static std::vector<float> Values(const PulledParameters& pulled) {
    const Tensor& w = pulled.dense.at("w");
    return std::vector<float>(w.data<float>(), w.data<float>() + w.num_elements());
  }

  static Gradients MakeGradients(float value) {
    Gradients gradients;
    gradients.dense["w"] = *Tensor::FromValues<float>(Shape({4}), {value, value, value, value});
    return gradients;
  }

  FakeClock clock_;
  SeededRandom random_{3};
  std::unique_ptr<WiredShard> shard_;
  std::unique_ptr<ParameterServerClient> client_;
};

TEST_F(OverlappedPushTest, FinishReturnsTheOutcomeOfThePushStartedLast) {
  OverlappedPush overlapped(*client_);
  EXPECT_FALSE(overlapped.in_flight());
  const Gradients gradients = MakeGradients(1);
  overlapped.Start(gradients, {0}, 8, Origin(10, 18));
  EXPECT_TRUE(overlapped.in_flight());
  EXPECT_EQ(overlapped.origin().records().begin(), 10);

  absl::StatusOr<PushSummary> summary = overlapped.Finish();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->applied);
  EXPECT_FALSE(overlapped.in_flight());
  std::vector<WirePush> received = shard_->wire().pushes();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].examples, 8);
  ASSERT_TRUE(received[0].origin.has_value());
  EXPECT_EQ(received[0].origin->records().end(), 18);
  // The shard booked the records in its ledger.
  const PushLedger ledger = shard_->Ledger("job-1");
  ASSERT_EQ(ledger.leases_size(), 1);
  ASSERT_EQ(ledger.leases(0).applied_size(), 1);
  EXPECT_EQ(ledger.leases(0).applied(0).begin(), 10);
  EXPECT_EQ(ledger.leases(0).applied(0).end(), 18);
}

TEST_F(OverlappedPushTest, ServesPushAfterPushInOrder) {
  OverlappedPush overlapped(*client_);
  Gradients gradients;
  for (int i = 1; i <= 3; ++i) {
    gradients = MakeGradients(static_cast<float>(i));
    overlapped.Start(gradients, {0}, i, Origin(i * 10, i * 10 + 1));
    absl::StatusOr<PushSummary> summary = overlapped.Finish();
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->sequence, static_cast<uint64_t>(i));
  }
  std::vector<WirePush> received = shard_->wire().pushes();
  ASSERT_EQ(received.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(received[i].examples, i + 1);
    EXPECT_EQ(received[i].id.sequence(), static_cast<uint64_t>(i + 1));
  }
  EXPECT_EQ(shard_->Ledger("job-1").applied_pushes(), 3);
  // Gradients 1, 2 and 3 each applied once.
  EXPECT_THAT(shard_->Dense("job-1", "w"), ::testing::Each(-6.0f));
}

TEST_F(OverlappedPushTest, TheSameThreadPullsWhileThePushIsInFlight) {
  OverlappedPush overlapped(*client_);
  const Gradients gradients = MakeGradients(1);
  overlapped.Start(gradients, {0}, 8, Origin(0, 8));
  PulledParameters pulled;
  const absl::Status read = client_->Pull({}, PullOptions(), &pulled);
  ASSERT_TRUE(read.ok()) << read;
  // Read before or after the push was applied, never halfway.
  EXPECT_THAT(Values(pulled), ::testing::AnyOf(::testing::Each(0.0f), ::testing::Each(-1.0f)));
  EXPECT_TRUE(overlapped.in_flight());

  absl::StatusOr<PushSummary> summary = overlapped.Finish();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->applied);
  ASSERT_TRUE(client_->Pull({}, PullOptions(), &pulled).ok());
  EXPECT_THAT(Values(pulled), ::testing::Each(-1.0f));
}

TEST_F(OverlappedPushTest, DestroyingWithAPushInFlightWaitsForIt) {
  const Gradients gradients = MakeGradients(2);
  {
    OverlappedPush overlapped(*client_);
    overlapped.Start(gradients, {0}, 4, Origin(0, 4));
  }
  // The destructor returned only once the push was made.
  EXPECT_EQ(shard_->Ledger("job-1").applied_pushes(), 1);
}

TEST_F(OverlappedPushTest, AFailedPushIsReturnedByFinish) {
  client_->Cancel();
  OverlappedPush overlapped(*client_);
  const Gradients gradients = MakeGradients(1);
  overlapped.Start(gradients, {0}, 8, Origin(0, 8));
  absl::StatusOr<PushSummary> summary = overlapped.Finish();
  EXPECT_TRUE(absl::IsCancelled(summary.status())) << summary.status();
  EXPECT_EQ(shard_->Ledger("job-1").applied_pushes(), 0);
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
