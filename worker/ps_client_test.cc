#include "worker/ps_client.h"

#include <memory>
#include <numeric>
#include <vector>

#include "common/placement/row_placement.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"
#include "worker/testing/fake_parameter_server.h"

namespace pstrain {
namespace worker {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr uint64_t kIncarnation = 77;
constexpr int64_t kBigElements = 3000;  // 12000 bytes: 12 chunks of 1000

VariableDef Dense(const std::string& name, std::vector<int64_t> shape) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(VARIABLE_KIND_DENSE);
  def.spec.set_dtype(DATA_TYPE_FLOAT32);
  for (int64_t d : shape) def.spec.mutable_shape()->add_dims(d);
  return def;
}

VariableDef Table(const std::string& name, int64_t rows, int64_t dim) {
  VariableDef def = Dense(name, {rows, dim});
  def.spec.set_kind(VARIABLE_KIND_EMBEDDING);
  return def;
}

std::vector<float> Iota(int64_t n, float start) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

Tensor FloatTensor(Shape shape, const std::vector<float>& values) {
  return *Tensor::FromValues<float>(std::move(shape), values);
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

// Two shards: "w" (big) on shard 0, "b" on shard 1, table "emb" over both.
class PsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Retry pauses and heartbeat intervals pass without real time.
    clock_.JumpToDeadlines();
    for (int s = 0; s < 2; ++s) {
      shards_.push_back(std::make_unique<FakeParameterServer>(s, 2));
      shards_[s]->AddTable("emb", 4);
      shards_[s]->set_pull_chunk_bytes(1000);
    }
    shards_[0]->AddDense("w", {kBigElements}, Iota(kBigElements, 1));
    shards_[1]->AddDense("b", {3}, {0.5f, 1.5f, 2.5f});
    for (auto& shard : shards_) ASSERT_TRUE(shard->Start().ok());
  }

  std::unique_ptr<ParameterServerClient> NewClient(ParameterServerClientOptions options = {}) {
    google::protobuf::RepeatedPtrField<VariablePlacement> placements;
    VariablePlacement* w = placements.Add();
    w->set_name("w");
    w->set_shard_index(0);
    VariablePlacement* b = placements.Add();
    b->set_name("b");
    b->set_shard_index(1);
    VariablePlacement* emb = placements.Add();
    emb->set_name("emb");
    emb->set_shard_index(-1);
    absl::StatusOr<ShardSlicer> slicer = ShardSlicer::Create(
        {Dense("w", {kBigElements}), Dense("b", {3}), Table("emb", 1000, 4)}, placements, 2);
    EXPECT_TRUE(slicer.ok()) << slicer.status();
    options.job_id = "job-1";
    options.worker = 1;
    options.incarnation = kIncarnation;
    options.chunk_bytes = 1000;
    options.parallel_min_bytes = 4000;
    options.streams_per_shard = 2;
    options.call_timeout = absl::Seconds(20);
    options.retry.deadline = absl::Seconds(30);
    absl::StatusOr<std::unique_ptr<ParameterServerClient>> client =
        ParameterServerClient::Create({shards_[0]->address(), shards_[1]->address()},
                                      *std::move(slicer), options, clock_, random_, nullptr);
    EXPECT_TRUE(client.ok()) << client.status();
    return *std::move(client);
  }

  Gradients MakeGradients() {
    Gradients g;
    g.dense["w"] = FloatTensor(Shape({kBigElements}), Iota(kBigElements, 100));
    g.dense["b"] = FloatTensor(Shape({3}), {1, 2, 3});
    EmbeddingRows& rows = g.rows["emb"];
    rows.ids = {3, 10, 42, 999, 7};
    rows.values = FloatTensor(Shape({5, 4}), Iota(20, 0));
    return g;
  }

  FakeClock clock_;
  SeededRandom random_{1};
  std::vector<std::unique_ptr<FakeParameterServer>> shards_;
};

TEST_F(PsClientTest, ChunkedMultiPartPushIsReassembledOnEachShard) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  Gradients gradients = MakeGradients();
  absl::StatusOr<PushSummary> summary = client->Push(gradients, {0, 0}, 32);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_FALSE(summary->stale);
  EXPECT_TRUE(summary->applied);
  EXPECT_EQ(summary->sequence, 1u);
  EXPECT_EQ(summary->shards[0].outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(summary->shards[1].outcome, PUSH_OUTCOME_APPLIED);

  std::vector<FakeParameterServer::ReceivedPush> big = shards_[0]->received();
  ASSERT_EQ(big.size(), 1u);
  // 12000 bytes of "w" plus rows: over parallel_min_bytes, so two parts
  // over two streams, each in messages of at most about one chunk.
  EXPECT_EQ(big[0].num_parts, 2);
  EXPECT_GE(big[0].messages, 12);
  EXPECT_LT(shards_[0]->largest_message_bytes(), 1200);
  EXPECT_THAT(big[0].dense["w"], ElementsAreArray(Iota(kBigElements, 100)));
  EXPECT_EQ(big[0].id.worker(), 1);
  EXPECT_EQ(big[0].id.incarnation(), kIncarnation);
  EXPECT_EQ(big[0].id.sequence(), 1u);
  EXPECT_EQ(big[0].examples, 32);

  std::vector<FakeParameterServer::ReceivedPush> small = shards_[1]->received();
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].num_parts, 1);
  EXPECT_THAT(small[0].dense["b"], ElementsAre(1, 2, 3));

  // Every row went to the shard its id hashes to, with its own values.
  const std::vector<int64_t> ids = {3, 10, 42, 999, 7};
  for (size_t i = 0; i < ids.size(); ++i) {
    const int owner = RowShard(ids[i], 2);
    auto& rows = (owner == 0 ? big : small)[0].rows["emb"];
    ASSERT_EQ(rows.count(ids[i]), 1u) << ids[i];
    EXPECT_THAT(rows[ids[i]], ElementsAreArray(Iota(4, 4.0f * i)));
    auto& other = (owner == 0 ? small : big)[0].rows["emb"];
    EXPECT_EQ(other.count(ids[i]), 0u);
  }
}

TEST_F(PsClientTest, PullReadsChunkedDenseVariablesAndRowsInTheOrderAsked) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  RowIds rows;
  rows["emb"] = {20, 5, 13, 6};
  PulledParameters pulled;
  ASSERT_TRUE(client->Pull(rows, PullOptions(), &pulled).ok());
  EXPECT_THAT(Values(pulled.dense["w"]), ElementsAreArray(Iota(kBigElements, 1)));
  EXPECT_THAT(Values(pulled.dense["b"]), ElementsAre(0.5f, 1.5f, 2.5f));
  const EmbeddingRows& emb = pulled.rows["emb"];
  EXPECT_THAT(emb.ids, ElementsAre(20, 5, 13, 6));
  ASSERT_EQ(emb.values.shape(), Shape({4, 4}));
  for (int r = 0; r < 4; ++r) {
    EXPECT_FLOAT_EQ(emb.values.data<float>()[r * 4], 0.01f * (emb.ids[r] % 7)) << r;
  }
  EXPECT_THAT(pulled.versions, ElementsAre(0, 0));
  EXPECT_EQ(pulled.bytes, (kBigElements + 3 + 16) * 4);
  // "w" is over parallel_min_bytes: read as two ranges on two streams.
  EXPECT_EQ(shards_[0]->pulls(), 2);

  // The view the model reads.
  ParameterView view = pulled.View();
  EXPECT_EQ(view.dense.at("b"), &pulled.dense["b"]);
  EXPECT_EQ(view.rows.at("emb"), &pulled.rows["emb"]);
}

TEST_F(PsClientTest, PushedGradientsShowInTheNextPull) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  PulledParameters pulled;
  ASSERT_TRUE(client->Pull({}, PullOptions(), &pulled).ok());
  Gradients gradients;
  gradients.dense["b"] = FloatTensor(Shape({3}), {1, 1, 1});
  ASSERT_TRUE(client->Push(gradients, pulled.versions, 1).ok());
  ASSERT_TRUE(client->Pull({}, PullOptions(), &pulled).ok());
  EXPECT_THAT(Values(pulled.dense["b"]), ElementsAre(0.4f, 1.4f, 2.4f));
  EXPECT_THAT(pulled.versions, ElementsAre(1, 1));  // both shards got a push
}

TEST_F(PsClientTest, RetryAfterALostReplyReusesThePushIdAndIsAppliedOnce) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  shards_[1]->DropReplyOf(1);
  Gradients gradients = MakeGradients();
  absl::StatusOr<PushSummary> summary = client->Push(gradients, {0, 0}, 32);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_FALSE(summary->stale);
  EXPECT_TRUE(summary->applied);

  std::vector<FakeParameterServer::ReceivedPush> attempts = shards_[1]->received();
  ASSERT_EQ(attempts.size(), 2u);
  for (const auto& attempt : attempts) {
    EXPECT_EQ(attempt.id.worker(), 1);
    EXPECT_EQ(attempt.id.incarnation(), kIncarnation);
    EXPECT_EQ(attempt.id.sequence(), 1u);
  }
  EXPECT_EQ(attempts[0].outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(attempts[1].outcome, PUSH_OUTCOME_DUPLICATE);
  EXPECT_EQ(summary->shards[1].outcome, PUSH_OUTCOME_DUPLICATE);
  EXPECT_EQ(shards_[1]->applied(), 1);
  EXPECT_THAT(shards_[1]->dense("b"), ElementsAre(0.4f, 1.3f, 2.2f));
  // The retry waited out a backoff on the injected clock, not a real one.
  EXPECT_GT(clock_.slept(), absl::ZeroDuration());

  // The next push takes the next sequence number.
  summary = client->Push(gradients, {1, 1}, 32);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(shards_[1]->received().back().id.sequence(), 2u);
}

TEST_F(PsClientTest, StaleOutcomeIsSurfacedAndNotCountedAsApplied) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  shards_[1]->SetOutcome([](const PushRequest& push) -> std::optional<PushResult> {
    if (push.id().sequence() != 2) return std::nullopt;
    PushResult r;
    r.set_outcome(PUSH_OUTCOME_STALE);
    return r;
  });
  Gradients gradients = MakeGradients();
  absl::StatusOr<PushSummary> first = client->Push(gradients, {0, 0}, 32);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->stale);
  absl::StatusOr<PushSummary> second = client->Push(gradients, {1, 1}, 32);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->stale);
  EXPECT_FALSE(second->applied);
  EXPECT_EQ(second->shards[1].outcome, PUSH_OUTCOME_STALE);
}

TEST_F(PsClientTest, RefusedPushIsAnErrorNamingTheShard) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  shards_[0]->SetOutcome([](const PushRequest&) -> std::optional<PushResult> {
    PushResult r;
    r.set_outcome(PUSH_OUTCOME_REJECTED);
    r.mutable_status()->set_code(static_cast<int>(absl::StatusCode::kAborted));
    r.mutable_status()->set_message("worker 1 restarted");
    return r;
  });
  absl::StatusOr<PushSummary> summary = client->Push(MakeGradients(), {0, 0}, 32);
  EXPECT_TRUE(absl::IsAborted(summary.status())) << summary.status();
  EXPECT_THAT(std::string(summary.status().message()), HasSubstr("ps/0"));
  EXPECT_THAT(std::string(summary.status().message()), HasSubstr("worker 1 restarted"));
}

TEST_F(PsClientTest, PullThatWaitsForAVersionSaysWhichShardItWaitedFor) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  PullOptions options;
  options.min_versions = {0, 5};
  PulledParameters pulled;
  absl::Status status = client->Pull({}, options, &pulled);
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("ps/1"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("version 5"));
}

TEST_F(PsClientTest, UnreachableShardIsRetriedUntilTheDeadline) {
  ParameterServerClientOptions options;
  std::unique_ptr<ParameterServerClient> client = NewClient(options);
  shards_[1]->Shutdown();
  PulledParameters pulled;
  absl::Status status = client->Pull({}, PullOptions(), &pulled);
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("ps/1"));
  EXPECT_GE(clock_.slept(), absl::Seconds(20));
}

TEST_F(PsClientTest, StepsReuseOneLongLivedStreamPerLane) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  Gradients gradients = MakeGradients();
  RowIds rows = {{"emb", {3, 10, 42}}};
  for (int step = 0; step < 10; ++step) {
    PulledParameters pulled;
    ASSERT_TRUE(client->Pull(rows, PullOptions(), &pulled).ok());
    absl::StatusOr<PushSummary> summary = client->Push(gradients, pulled.versions, 32);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_TRUE(summary->applied);
  }
  // Two lanes per shard: a stream each, opened once for all ten steps.
  for (const auto& shard : shards_) EXPECT_LE(shard->streams_opened(), 2);
  EXPECT_EQ(shards_[0]->applied(), 10);
}

TEST_F(PsClientTest, APushRefusedBeforeItWasAllSentEndsItsPartsAndTheStreamsGoOn) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  // "w" is 12 messages to shard 0, in two parts; each part is refused at
  // its first message.
  shards_[0]->RefuseEarly(1, absl::FailedPreconditionError("job-1 is not running here"));
  Gradients gradients = MakeGradients();
  absl::StatusOr<PushSummary> refused = client->Push(gradients, {0, 0}, 32);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("ps/0"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("not running"));

  // The next push rides the same streams, behind the refused parts' ends.
  absl::StatusOr<PushSummary> next = client->Push(gradients, {0, 0}, 32);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(next->applied);
  EXPECT_EQ(shards_[0]->refused_parts_ended(), 2);
  EXPECT_LE(shards_[0]->streams_opened(), 2);
  EXPECT_EQ(shards_[0]->applied(), 1);
}

TEST_F(PsClientTest, CancelEndsCallsWithCancelled) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  client->Cancel();
  PulledParameters pulled;
  EXPECT_TRUE(absl::IsCancelled(client->Pull({}, PullOptions(), &pulled)));
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
