#include "worker/ps_client.h"

#include <atomic>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

#include "common/clock/fake_clock.h"
#include "common/placement/row_placement.h"
#include "common/status/error_reason.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/ps/testing/wired_shard.h"

namespace pstrain {
namespace worker {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr char kJob[] = "job-1";
constexpr uint64_t kIncarnation = 77;
constexpr int64_t kBigElements = 3000;  // 12000 bytes: 12 chunks of 1000
constexpr float kLearningRate = 0.1f;

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

// The job as the coordinator sets it up on shard `index` of two: its
// variables drawn at random (so that every value read says where it came
// from), plain SGD.
CreateVariablesRequest JobOnShard(int index, const std::vector<VariableDef>& variables,
                                  UpdateMode mode = UPDATE_MODE_ASYNC) {
  CreateVariablesRequest request;
  request.set_job_id(kJob);
  request.set_shard_index(index);
  request.set_num_shards(2);
  request.set_num_workers(2);
  request.mutable_optimizer()->set_learning_rate(kLearningRate);
  request.mutable_training()->set_update_mode(mode);
  if (mode == UPDATE_MODE_BOUNDED_STALENESS) request.mutable_training()->set_staleness_bound(1);
  for (const VariableDef& def : variables) {
    VariableSpec& spec = *request.add_variables() = def.spec;
    spec.mutable_initializer()->set_kind(INITIALIZER_KIND_UNIFORM);
    spec.mutable_initializer()->set_min(-1);
    spec.mutable_initializer()->set_max(1);
    spec.mutable_initializer()->set_seed(7);
  }
  return request;
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

// `before` after one SGD step on `gradient`.
std::vector<float> Stepped(const std::vector<float>& before, const std::vector<float>& gradient) {
  std::vector<float> after = before;
  for (size_t i = 0; i < after.size(); ++i) after[i] -= kLearningRate * gradient[i];
  return after;
}

// Two real shards behind faulty wires: "w" (big) on shard 0, "b" on shard
// 1, table "emb" over both, answering pulls in messages of 1000 bytes.
class PsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Retry pauses and heartbeat intervals pass without real time.
    clock_.JumpToDeadlines();
    InProcessShardOptions options;
    options.service.chunk_bytes = 1000;
    for (int s = 0; s < 2; ++s) {
      absl::StatusOr<std::unique_ptr<WiredShard>> shard = WiredShard::Start(options);
      ASSERT_TRUE(shard.ok()) << shard.status();
      shards_.push_back(*std::move(shard));
    }
    ASSERT_TRUE(shards_[0]->Create(JobOnShard(0, ShardVariables(0))).ok());
    ASSERT_TRUE(shards_[1]->Create(JobOnShard(1, ShardVariables(1))).ok());
  }

  static std::vector<VariableDef> ShardVariables(int shard) {
    if (shard == 0) return {Dense("w", {kBigElements}), Table("emb", 1000, 4)};
    return {Dense("b", {3}), Table("emb", 1000, 4)};
  }

  std::unique_ptr<ParameterServerClient> NewClient(
      uint64_t incarnation = kIncarnation,
      std::function<absl::Time()> membership_deadline = nullptr) {
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
    ParameterServerClientOptions options;
    options.job_id = kJob;
    options.worker = 1;
    options.incarnation = incarnation;
    options.chunk_bytes = 1000;
    options.parallel_min_bytes = 4000;
    options.streams_per_shard = 2;
    options.call_timeout = absl::Seconds(20);
    options.retry.deadline = absl::Seconds(30);
    options.membership_deadline = std::move(membership_deadline);
    absl::StatusOr<std::unique_ptr<ParameterServerClient>> client =
        ParameterServerClient::Create({shards_[0]->address(), shards_[1]->address()},
                                      *std::move(slicer), options, clock_, random_, nullptr);
    EXPECT_TRUE(client.ok()) << client.status();
    return *std::move(client);
  }

  static const std::vector<int64_t>& PushedIds() {
    static const std::vector<int64_t> ids = {3, 10, 42, 999, 7};
    return ids;
  }

  Gradients MakeGradients() {
    Gradients g;
    g.dense["w"] = FloatTensor(Shape({kBigElements}), Iota(kBigElements, 100));
    g.dense["b"] = FloatTensor(Shape({3}), {1, 2, 3});
    EmbeddingRows& rows = g.rows["emb"];
    rows.ids = PushedIds();
    rows.values = FloatTensor(Shape({5, 4}), Iota(20, 0));
    return g;
  }

  // A client of another worker (worker/0) that knows "b" alone, on shard 1.
  std::unique_ptr<ParameterServerClient> ClientOfBAlone() {
    google::protobuf::RepeatedPtrField<VariablePlacement> placements;
    VariablePlacement* b = placements.Add();
    b->set_name("b");
    b->set_shard_index(1);
    ParameterServerClientOptions options;
    options.job_id = kJob;
    options.worker = 0;
    options.incarnation = 5;
    return *ParameterServerClient::Create({shards_[0]->address(), shards_[1]->address()},
                                          *ShardSlicer::Create({Dense("b", {3})}, placements, 2),
                                          options, clock_, random_, nullptr);
  }
  static Gradients GradientOfB() {
    Gradients g;
    g.dense["b"] = FloatTensor(Shape({3}), {1, 1, 1});
    return g;
  }

  // Row `id` of "emb" on the shard that holds it.
  std::vector<float> EmbRow(int64_t id) { return shards_[RowShard(id, 2)]->Row(kJob, "emb", id); }

  // Takes the job off shard `s`, as DropJob does.
  void DropJob(int s) {
    DropJobRequest drop;
    drop.set_job_id(kJob);
    ASSERT_TRUE(shards_[s]->store().DropJob(drop).ok());
  }

  // Pushes applied on shard `s`.
  int64_t Applied(int s) { return shards_[s]->Ledger(kJob).applied_pushes(); }

  FakeClock clock_;
  SeededRandom random_{1};
  std::vector<std::unique_ptr<WiredShard>> shards_;
};

TEST_F(PsClientTest, ChunkedMultiPartPushIsReassembledOnEachShard) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  const std::vector<float> w = shards_[0]->Dense(kJob, "w");
  const std::vector<float> b = shards_[1]->Dense(kJob, "b");
  std::vector<std::vector<float>> rows;
  for (int64_t id : PushedIds()) rows.push_back(EmbRow(id));

  Gradients gradients = MakeGradients();
  absl::StatusOr<PushSummary> summary = client->Push(gradients, {0, 0}, 32);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_FALSE(summary->stale);
  EXPECT_TRUE(summary->applied);
  EXPECT_EQ(summary->sequence, 1u);
  EXPECT_EQ(summary->shards[0].outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(summary->shards[1].outcome, PUSH_OUTCOME_APPLIED);

  std::vector<WirePush> big = shards_[0]->wire().pushes();
  ASSERT_EQ(big.size(), 1u);
  // 12000 bytes of "w" plus rows: over parallel_min_bytes, so two parts
  // over two streams, each in messages of at most about one chunk.
  EXPECT_EQ(big[0].num_parts, 2);
  EXPECT_GE(big[0].messages, 12);
  EXPECT_EQ(big[0].parts_ended, 2);
  EXPECT_LT(shards_[0]->wire().largest_request_bytes(), 1200);
  EXPECT_EQ(big[0].id.worker(), 1);
  EXPECT_EQ(big[0].id.incarnation(), kIncarnation);
  EXPECT_EQ(big[0].id.sequence(), 1u);
  EXPECT_EQ(big[0].examples, 32);
  std::vector<WirePush> small = shards_[1]->wire().pushes();
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].num_parts, 1);

  // Each shard put the pieces together and applied the whole gradient
  // once: every element of "w" and "b" took exactly its own step.
  EXPECT_THAT(shards_[0]->Dense(kJob, "w"),
              Pointwise(FloatNear(1e-4), Stepped(w, Iota(kBigElements, 100))));
  EXPECT_THAT(shards_[1]->Dense(kJob, "b"), Pointwise(FloatNear(1e-5), Stepped(b, {1, 2, 3})));
  // Every row went to the shard its id hashes to (a shard refuses the
  // others' rows), with its own values.
  for (size_t i = 0; i < PushedIds().size(); ++i) {
    EXPECT_THAT(EmbRow(PushedIds()[i]),
                Pointwise(FloatNear(1e-5), Stepped(rows[i], Iota(4, 4.0f * i))))
        << PushedIds()[i];
  }
  EXPECT_EQ(Applied(0), 1);
  EXPECT_EQ(Applied(1), 1);
}

TEST_F(PsClientTest, PullReadsChunkedDenseVariablesAndRowsInTheOrderAsked) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  RowIds rows;
  rows["emb"] = {20, 5, 13, 6};
  PulledParameters pulled;
  ASSERT_TRUE(client->Pull(rows, PullOptions(), &pulled).ok());
  EXPECT_EQ(Values(pulled.dense["w"]), shards_[0]->Dense(kJob, "w"));
  EXPECT_EQ(Values(pulled.dense["b"]), shards_[1]->Dense(kJob, "b"));
  const EmbeddingRows& emb = pulled.rows["emb"];
  EXPECT_THAT(emb.ids, ElementsAre(20, 5, 13, 6));
  ASSERT_EQ(emb.values.shape(), Shape({4, 4}));
  for (int r = 0; r < 4; ++r) {
    const std::vector<float> row(emb.values.data<float>() + r * 4,
                                 emb.values.data<float>() + r * 4 + 4);
    EXPECT_EQ(row, EmbRow(emb.ids[r])) << r;
  }
  EXPECT_THAT(pulled.versions, ElementsAre(0, 0));
  EXPECT_EQ(pulled.bytes, (kBigElements + 3 + 16) * 4);
  // "w" is over parallel_min_bytes: read as two ranges on two streams.
  EXPECT_EQ(shards_[0]->wire().pulls(), 2);

  // The view the model reads.
  ParameterView view = pulled.View();
  EXPECT_EQ(view.dense.at("b"), &pulled.dense["b"]);
  EXPECT_EQ(view.rows.at("emb"), &pulled.rows["emb"]);
}

TEST_F(PsClientTest, PushedGradientsShowInTheNextPull) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  PulledParameters pulled;
  ASSERT_TRUE(client->Pull({}, PullOptions(), &pulled).ok());
  const std::vector<float> b = Values(pulled.dense["b"]);
  Gradients gradients;
  gradients.dense["b"] = FloatTensor(Shape({3}), {1, 1, 1});
  ASSERT_TRUE(client->Push(gradients, pulled.versions, 1).ok());
  ASSERT_TRUE(client->Pull({}, PullOptions(), &pulled).ok());
  EXPECT_THAT(Values(pulled.dense["b"]), Pointwise(FloatNear(1e-5), Stepped(b, {1, 1, 1})));
  EXPECT_THAT(pulled.versions, ElementsAre(1, 1));  // both shards got a push
}

TEST_F(PsClientTest, RetryAfterALostReplyReusesThePushIdAndIsAppliedOnce) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  const std::vector<float> b = shards_[1]->Dense(kJob, "b");
  shards_[1]->wire().DropAnswerOf(1);
  Gradients gradients = MakeGradients();
  absl::StatusOr<PushSummary> summary = client->Push(gradients, {0, 0}, 32);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_FALSE(summary->stale);
  EXPECT_TRUE(summary->applied);

  std::vector<WirePush> attempts = shards_[1]->wire().pushes();
  ASSERT_EQ(attempts.size(), 2u);
  for (const WirePush& attempt : attempts) {
    EXPECT_EQ(attempt.id.worker(), 1);
    EXPECT_EQ(attempt.id.incarnation(), kIncarnation);
    EXPECT_EQ(attempt.id.sequence(), 1u);
  }
  EXPECT_EQ(attempts[0].answer.outcome(), PUSH_OUTCOME_APPLIED);
  EXPECT_TRUE(attempts[0].answer_dropped);
  EXPECT_EQ(attempts[1].answer.outcome(), PUSH_OUTCOME_DUPLICATE);
  EXPECT_EQ(summary->shards[1].outcome, PUSH_OUTCOME_DUPLICATE);
  // Applied once: one step of "b", one push in the shard's ledger.
  EXPECT_EQ(Applied(1), 1);
  EXPECT_EQ(shards_[1]->Version(kJob), 1);
  EXPECT_THAT(shards_[1]->Dense(kJob, "b"), Pointwise(FloatNear(1e-5), Stepped(b, {1, 2, 3})));
  // The retry waited out a backoff on the injected clock, not a real one.
  EXPECT_GT(clock_.slept(), absl::ZeroDuration());

  // The next push takes the next sequence number.
  summary = client->Push(gradients, {1, 1}, 32);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(shards_[1]->wire().pushes().back().id.sequence(), 2u);
  EXPECT_EQ(Applied(1), 2);
}

TEST_F(PsClientTest, StaleOutcomeIsSurfacedAndNotCountedAsApplied) {
  // Shard 1 bounds staleness at one version.
  ASSERT_NO_FATAL_FAILURE(DropJob(1));
  ASSERT_TRUE(
      shards_[1]->Create(JobOnShard(1, ShardVariables(1), UPDATE_MODE_BOUNDED_STALENESS)).ok());
  std::unique_ptr<ParameterServerClient> client = NewClient();
  Gradients gradients = MakeGradients();
  absl::StatusOr<PushSummary> first = client->Push(gradients, {0, 0}, 32);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->stale);
  // Another worker moves shard 1 on by two versions meanwhile.
  std::unique_ptr<ParameterServerClient> other = ClientOfBAlone();
  ASSERT_TRUE(other->Push(GradientOfB(), {-1, 1}, 1).ok());
  ASSERT_TRUE(other->Push(GradientOfB(), {-1, 2}, 1).ok());

  // Computed from version 1, two behind shard 1.
  absl::StatusOr<PushSummary> second = client->Push(gradients, {1, 1}, 32);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->stale);
  EXPECT_FALSE(second->applied);
  EXPECT_EQ(second->shards[1].outcome, PUSH_OUTCOME_STALE);
}

TEST_F(PsClientTest, APushInFlightEndsItsRoundOnTheShardsItInvolves) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  Gradients gradients = MakeGradients();
  client->StartPush(gradients, {0, 0}, 32);
  EXPECT_THAT(client->RoundEndsOfPushInFlight(), ElementsAre(1, 1));
  absl::StatusOr<PushSummary> pushed = client->FinishPush();
  ASSERT_TRUE(pushed.ok()) << pushed.status();

  // A push that could not start joins no round.
  client->StartPush(gradients, {1}, 32);
  EXPECT_THAT(client->RoundEndsOfPushInFlight(), ElementsAre(0, 0));
  EXPECT_TRUE(absl::IsInvalidArgument(client->FinishPush().status()));

  // A client of "b" alone, on shard 1: shard 0 is never read, so a pull
  // need not wait for it.
  std::unique_ptr<ParameterServerClient> on_one = ClientOfBAlone();
  const Gradients of_b = GradientOfB();
  on_one->StartPush(of_b, {-1, 1}, 1);
  EXPECT_THAT(on_one->RoundEndsOfPushInFlight(), ElementsAre(0, 2));
  pushed = on_one->FinishPush();
  ASSERT_TRUE(pushed.ok()) << pushed.status();
}

TEST_F(PsClientTest, RefusedPushIsAnErrorNamingTheShard) {
  // The worker restarted: a push of its new incarnation reached the
  // shards first, so the old one's pushes are refused.
  std::unique_ptr<ParameterServerClient> restarted = NewClient(kIncarnation + 1);
  ASSERT_TRUE(restarted->Push(MakeGradients(), {0, 0}, 32).ok());
  std::unique_ptr<ParameterServerClient> client = NewClient();
  absl::StatusOr<PushSummary> summary = client->Push(MakeGradients(), {1, 1}, 32);
  EXPECT_TRUE(absl::IsAborted(summary.status())) << summary.status();
  EXPECT_EQ(ReasonOf(summary.status()), ERROR_REASON_INCARNATION_SUPERSEDED);
  EXPECT_TRUE(EndsRun(summary.status()));
  EXPECT_THAT(std::string(summary.status().message()), HasSubstr("ps/0"));
  EXPECT_THAT(std::string(summary.status().message()), HasSubstr("worker 1 restarted"));
  EXPECT_EQ(Applied(0), 1);
}

// A push that reaches a shard after the deadline it carried (it waited at
// a stalled shard) is tried again with the deadline of now while the
// worker's membership holds, and refused once it has lapsed.
TEST_F(PsClientTest, APushThatOutlivedItsDeadlineIsTriedAgainWhileTheMembershipHolds) {
  std::atomic<int> asked{0};
  std::unique_ptr<ParameterServerClient> client = NewClient(kIncarnation, [&asked] {
    // The first attempt's deadline has passed when it arrives.
    return asked++ == 0 ? absl::Now() - absl::Seconds(1) : absl::Now() + absl::Minutes(1);
  });
  absl::StatusOr<PushSummary> summary = client->Push(MakeGradients(), {0, 0}, 32);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(Applied(0), 1);
  EXPECT_EQ(Applied(1), 1);

  std::unique_ptr<ParameterServerClient> lapsed =
      NewClient(kIncarnation + 1, [] { return absl::Now() - absl::Seconds(1); });
  summary = lapsed->Push(MakeGradients(), {1, 1}, 32);
  EXPECT_EQ(ReasonOf(summary.status()), ERROR_REASON_MEMBERSHIP_LAPSED) << summary.status();
  EXPECT_EQ(Applied(0), 1);
}

TEST_F(PsClientTest, PullThatWaitsForAVersionSaysWhichShardItWaitedFor) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  PullOptions options;
  options.min_versions = {0, 5};
  // Shard 1 is at version 0 and nothing pushes: the wait runs out.
  options.wait = absl::Milliseconds(50);
  PulledParameters pulled;
  absl::Status status = client->Pull({}, options, &pulled);
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("ps/1"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("version 5"));
}

TEST_F(PsClientTest, UnreachableShardIsRetriedUntilTheDeadline) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
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
  for (const auto& shard : shards_) EXPECT_LE(shard->wire().streams_opened(), 2);
  EXPECT_EQ(Applied(0), 10);
}

TEST_F(PsClientTest, APushRefusedBeforeItWasAllSentEndsItsPartsAndTheStreamsGoOn) {
  std::unique_ptr<ParameterServerClient> client = NewClient();
  // The job is not on shard 0 (yet): "w" is 12 messages to it, in two
  // parts; each part is refused at its first message.
  ASSERT_NO_FATAL_FAILURE(DropJob(0));
  Gradients gradients = MakeGradients();
  absl::StatusOr<PushSummary> refused = client->Push(gradients, {0, 0}, 32);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_EQ(ReasonOf(refused.status()), ERROR_REASON_JOB_ENDED);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("ps/0"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("not running"));

  // The next push rides the same streams, behind the refused parts' ends.
  ASSERT_TRUE(shards_[0]->Create(JobOnShard(0, ShardVariables(0))).ok());
  absl::StatusOr<PushSummary> next = client->Push(gradients, {0, 0}, 32);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(next->applied);
  const std::vector<WirePush> pushes = shards_[0]->wire().pushes();
  ASSERT_EQ(pushes.size(), 2u);
  EXPECT_EQ(pushes[0].answer.outcome(), PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(pushes[0].parts_ended, 2);
  EXPECT_EQ(pushes[1].answer.outcome(), PUSH_OUTCOME_APPLIED);
  EXPECT_LE(shards_[0]->wire().streams_opened(), 2);
  EXPECT_EQ(Applied(0), 1);
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
