#include "server/ps/push_assembler.h"

#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kN = 8;  // elements of "w"

class PushAssemblerTest : public ::testing::Test {
 protected:
  void SetUp() override { Reset(PushAssemblerOptions()); }

  void Reset(const PushAssemblerOptions& options) {
    CreateVariablesRequest r;
    r.set_job_id("job");
    r.set_num_shards(1);
    r.set_num_workers(2);
    r.mutable_optimizer()->set_learning_rate(1.0f);
    VariableSpec* v = r.add_variables();
    v->set_name("w");
    v->set_kind(VARIABLE_KIND_DENSE);
    v->set_dtype(DATA_TYPE_FLOAT32);
    v->mutable_shape()->add_dims(kN);
    assembler_ = std::make_unique<PushAssembler>(options, clock_, metrics_);
    shard_ = ParameterShard::Create(r, ShardOptions(), clock_, metrics_).value();
  }

  // A message with elements [begin, end) of a gradient whose element i is i.
  PushRequest Chunk(uint64_t seq, int64_t begin, int64_t end, bool last, int num_parts = 1,
                    int part = 0) {
    PushRequest m;
    m.set_job_id("job");
    m.mutable_id()->set_worker(0);
    m.mutable_id()->set_incarnation(1);
    m.mutable_id()->set_sequence(seq);
    m.set_num_parts(num_parts);
    m.set_part(part);
    m.set_end_of_push(last);
    DenseTensor* d = m.add_gradients()->mutable_dense();
    m.mutable_gradients(0)->set_name("w");
    d->set_dtype(DATA_TYPE_FLOAT32);
    d->mutable_shape()->add_dims(kN);
    std::vector<float> values;
    for (int64_t i = begin; i < end; ++i) values.push_back(static_cast<float>(i));
    d->set_data(values.data(), values.size() * 4);
    d->mutable_chunk()->set_offset(begin * 4);
    d->mutable_chunk()->set_total_bytes(kN * 4);
    return m;
  }

  // Moves `m`'s gradient bytes into `segment` at `offset`: the message then
  // names where they lie, as a lane's would.
  static void PlaceInLane(PushRequest& m, const SharedSegment& segment, int64_t offset) {
    DenseTensor& d = *m.mutable_gradients(0)->mutable_dense();
    std::memcpy(segment.data() + offset, d.data().data(), d.data().size());
    d.mutable_shared()->set_offset(offset);
    d.mutable_shared()->set_size(static_cast<int64_t>(d.data().size()));
    d.clear_data();
  }

  std::unique_ptr<PushPart> Start(const PushRequest& first) {
    return assembler_->StartPart(std::shared_ptr<ParameterShard>(shard_), first);
  }

  std::vector<float> Values() {
    std::vector<float> out(kN);
    EXPECT_TRUE(shard_->ReadDense(0, 0, absl::MakeSpan(out)).ok());
    return out;
  }

  FakeClock clock_;
  prometheus::Registry registry_;
  ShardMetrics metrics_{registry_};
  std::unique_ptr<PushAssembler> assembler_;
  std::shared_ptr<ParameterShard> shard_;
};

TEST_F(PushAssemblerTest, PartsInAnyOrderCompleteThePushOnce) {
  PushRequest a1 = Chunk(1, 6, 8, false, 2, 0), a2 = Chunk(1, 0, 2, true, 2, 0);
  PushRequest b1 = Chunk(1, 2, 6, true, 2, 1);
  auto a = Start(a1);
  auto b = Start(b1);
  EXPECT_FALSE(a->Add(a1).reply.has_value());
  const PushPart::Step first = a->Add(a2);
  ASSERT_TRUE(first.reply.has_value());
  EXPECT_TRUE(first.finished);
  EXPECT_EQ(first.reply->outcome(), PUSH_OUTCOME_PART_RECEIVED);
  const PushPart::Step second = b->Add(b1);
  ASSERT_TRUE(second.reply.has_value());
  EXPECT_EQ(second.reply->outcome(), PUSH_OUTCOME_APPLIED);
  EXPECT_THAT(Values(), ::testing::ElementsAre(0, -1, -2, -3, -4, -5, -6, -7));
  EXPECT_EQ(assembler_->pending_pushes(), 0);
  EXPECT_EQ(assembler_->pending_bytes(), 0);
  // The same push again: answered DUPLICATE without being assembled.
  PushRequest whole = Chunk(1, 0, 8, true);
  EXPECT_EQ(Start(whole)->Add(whole).reply->outcome(), PUSH_OUTCOME_DUPLICATE);
}

TEST_F(PushAssemblerTest, OverlapIsRefusedAtOnceAndTheRestOfThePartDropped) {
  PushRequest m1 = Chunk(1, 0, 4, false), m2 = Chunk(1, 2, 6, false), m3 = Chunk(1, 6, 8, true);
  auto part = Start(m1);
  EXPECT_FALSE(part->Add(m1).reply.has_value());
  const PushPart::Step refused = part->Add(m2);
  ASSERT_TRUE(refused.reply.has_value());
  EXPECT_EQ(refused.reply->outcome(), PUSH_OUTCOME_REJECTED);
  EXPECT_THAT(refused.reply->status().message(), HasSubstr("overlaps"));
  const PushPart::Step rest = part->Add(m3);
  EXPECT_FALSE(rest.reply.has_value());
  EXPECT_TRUE(rest.finished);
  EXPECT_EQ(assembler_->pending_bytes(), 0);
  EXPECT_EQ(shard_->version(), 0);
  // A correct retry of the same push goes through.
  PushRequest whole = Chunk(1, 0, 8, true);
  EXPECT_EQ(Start(whole)->Add(whole).reply->outcome(), PUSH_OUTCOME_APPLIED);
}

TEST_F(PushAssemblerTest, AStreamThatEndsMidPartFailsThePush) {
  PushRequest a1 = Chunk(2, 0, 4, false, 2, 0);
  PushRequest b1 = Chunk(2, 4, 8, true, 2, 1);
  auto a = Start(a1);
  auto b = Start(b1);
  a->Add(a1);
  a.reset();  // the stream died before end_of_push
  const PushPart::Step step = b->Add(b1);
  ASSERT_TRUE(step.reply.has_value());
  EXPECT_EQ(step.reply->outcome(), PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(step.reply->status().code(), static_cast<int>(absl::StatusCode::kAborted));
  EXPECT_EQ(assembler_->pending_pushes(), 0);
  EXPECT_EQ(shard_->version(), 0);
}

TEST_F(PushAssemblerTest, BudgetRefusesPushesThatDoNotFit) {
  PushAssemblerOptions options;
  options.max_pending_bytes = kN * 4 - 1;
  Reset(options);
  PushRequest m = Chunk(1, 0, 4, true);
  const PushPart::Step step = Start(m)->Add(m);
  EXPECT_EQ(step.reply->status().code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(step.reply->status().reason(), ERROR_REASON_SHARD_BUSY);
}

TEST_F(PushAssemblerTest, AbandonedPushesExpire) {
  PushRequest a = Chunk(3, 0, 8, true, 2, 0);
  EXPECT_EQ(Start(a)->Add(a).reply->outcome(), PUSH_OUTCOME_PART_RECEIVED);
  EXPECT_EQ(assembler_->pending_pushes(), 1);  // part 1 never comes
  clock_.Advance(absl::Minutes(6));
  PushRequest other = Chunk(4, 0, 8, true);
  EXPECT_EQ(Start(other)->Add(other).reply->outcome(), PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(assembler_->pending_pushes(), 0);
  EXPECT_EQ(assembler_->pending_bytes(), 0);
}

TEST_F(PushAssemblerTest, APushCompletedAfterItsWorkersMembershipMayHaveLapsedIsNotApplied) {
  // Two parts: the first arrives in time, the second after the deadline
  // (the worker was frozen in between).
  PushRequest a = Chunk(1, 0, 4, true, 2, 0), b = Chunk(1, 4, 8, true, 2, 1);
  const int64_t deadline = absl::ToUnixMillis(clock_.Now() + absl::Seconds(5));
  a.set_valid_until_unix_ms(deadline);
  b.set_valid_until_unix_ms(deadline);
  auto first = Start(a);
  EXPECT_EQ(first->Add(a).reply->outcome(), PUSH_OUTCOME_PART_RECEIVED);
  clock_.Advance(absl::Seconds(6));
  auto second = Start(b);
  const PushPart::Step late = second->Add(b);
  ASSERT_TRUE(late.reply.has_value());
  EXPECT_EQ(late.reply->outcome(), PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(late.reply->status().code(), static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(late.reply->status().reason(), ERROR_REASON_MEMBERSHIP_LAPSED);
  EXPECT_THAT(late.reply->status().message(), ::testing::HasSubstr("membership could have lapsed"));
  EXPECT_THAT(Values(), ::testing::Each(0.0f));

  // In time, the same kind of push is applied.
  PushRequest c = Chunk(2, 0, 8, true);
  c.set_valid_until_unix_ms(absl::ToUnixMillis(clock_.Now() + absl::Seconds(5)));
  EXPECT_EQ(Start(c)->Add(c).reply->outcome(), PUSH_OUTCOME_APPLIED);
}

TEST_F(PushAssemblerTest, APushsOriginAndExamplesReachTheShardsLedger) {
  PushRequest m = Chunk(1, 0, kN, true);
  m.set_examples(16);
  m.mutable_origin()->set_lease_id(5);
  m.mutable_origin()->set_epoch(1);
  m.mutable_origin()->mutable_records()->set_begin(32);
  m.mutable_origin()->mutable_records()->set_end(48);
  EXPECT_EQ(Start(m)->Add(m).reply->outcome(), PUSH_OUTCOME_APPLIED);
  const PushLedger ledger = *shard_->ReadLedger({5}, LedgerRead::kOnly);
  EXPECT_EQ(ledger.applied_pushes(), 1);
  EXPECT_EQ(ledger.applied_examples(), 16);
  ASSERT_EQ(ledger.leases_size(), 1);
  EXPECT_EQ(ledger.leases(0).epoch(), 1);
  ASSERT_EQ(ledger.leases(0).applied_size(), 1);
  EXPECT_EQ(ledger.leases(0).applied(0).begin(), 32);
  EXPECT_EQ(ledger.leases(0).applied(0).end(), 48);

  // A malformed origin is refused before anything is assembled.
  PushRequest bad = Chunk(2, 0, kN, true);
  bad.mutable_origin()->set_lease_id(5);
  bad.mutable_origin()->mutable_records()->set_begin(10);
  bad.mutable_origin()->mutable_records()->set_end(10);
  const PushPart::Step step = Start(bad)->Add(bad);
  EXPECT_EQ(step.reply->outcome(), PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(step.reply->status().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(step.reply->status().message(), HasSubstr("origin.records"));
  EXPECT_EQ(shard_->ReadLedger({}, LedgerRead::kOnly)->applied_pushes(), 1);
}

TEST_F(PushAssemblerTest, GradientsInALaneAreReadWhereTheyLieWhenThePushIsApplied) {
  absl::StatusOr<std::unique_ptr<SharedSegment>> created = SharedSegment::Create(4096, "test");
  ASSERT_TRUE(created.ok()) << created.status();
  std::shared_ptr<const SharedSegment> lane = *std::move(created);
  std::weak_ptr<const SharedSegment> watch = lane;
  PushRequest a = Chunk(1, 0, 4, true, 2, 0), b = Chunk(1, 4, 8, true, 2, 1);
  PlaceInLane(a, *lane, 0);
  PlaceInLane(b, *lane, 1024);
  auto first = Start(a);
  EXPECT_EQ(first->Add(a, lane).reply->outcome(), PUSH_OUTCOME_PART_RECEIVED);
  // Not copied on arrival: the bytes in the lane when the push completes
  // are the ones applied (the worker keeps them unchanged until then).
  reinterpret_cast<float*>(lane->data())[3] = 30;
  auto second = Start(b);
  lane.reset();
  EXPECT_FALSE(watch.expired());  // the pending push keeps the segment
  EXPECT_EQ(second->Add(b, watch.lock()).reply->outcome(), PUSH_OUTCOME_APPLIED);
  // Learning rate 1 from zeros: minus the gradient.
  EXPECT_EQ(Values(), std::vector<float>({0, -1, -2, -30, -4, -5, -6, -7}));
  first.reset();
  second.reset();
  EXPECT_TRUE(watch.expired());
}

TEST_F(PushAssemblerTest, GradientsNamingALaneWithoutOneAreRefused) {
  absl::StatusOr<std::unique_ptr<SharedSegment>> lane = SharedSegment::Create(4096, "test");
  ASSERT_TRUE(lane.ok()) << lane.status();
  PushRequest m = Chunk(1, 0, kN, true);
  PlaceInLane(m, **lane, 0);
  const PushPart::Step step = Start(m)->Add(m);
  EXPECT_EQ(step.reply->outcome(), PUSH_OUTCOME_REJECTED);
  EXPECT_THAT(step.reply->status().message(), HasSubstr("its request names no lane"));
  EXPECT_EQ(Values(), std::vector<float>(kN, 0));
}

TEST_F(PushAssemblerTest, JobNotRunningAnswersRejected) {
  PushRequest m = Chunk(1, 0, 8, true);
  auto part = assembler_->StartPart(absl::FailedPreconditionError("job x is not running"), m);
  const PushPart::Step step = part->Add(m);
  EXPECT_EQ(step.reply->status().code(), static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_TRUE(step.finished);
}

}  // namespace
}  // namespace pstrain
