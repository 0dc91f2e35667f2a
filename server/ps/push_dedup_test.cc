#include "server/ps/push_dedup.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

using Verdict = PushDedup::Verdict;

TEST(PushDedupTest, RemembersFirstOutcome) {
  PushDedup d;
  const PushKey a{1, 7, 1}, b{1, 7, 2};
  EXPECT_EQ(d.Check(a).verdict, Verdict::kNew);
  d.Record(a, PUSH_OUTCOME_APPLIED);
  d.Record(b, PUSH_OUTCOME_STALE);
  EXPECT_EQ(d.Check(a).verdict, Verdict::kSeen);
  EXPECT_EQ(d.Check(a).outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(d.Check(b).outcome, PUSH_OUTCOME_STALE);
  EXPECT_EQ(d.Check(PushKey{2, 7, 1}).verdict, Verdict::kNew);  // another worker
}

TEST(PushDedupTest, NewIncarnationStartsANewSequence) {
  PushDedup d;
  d.Record({0, 1, 5}, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(d.Check({0, 2, 5}).verdict, Verdict::kNew);
  d.Record({0, 2, 1}, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(d.Check({0, 2, 1}).verdict, Verdict::kSeen);
  const PushDedup::Lookup old = d.Check({0, 1, 6});
  EXPECT_EQ(old.verdict, Verdict::kOldIncarnation);
  EXPECT_EQ(old.current_incarnation, 2u);
}

TEST(PushDedupTest, BoundedWindowTreatsOlderSequencesAsSeen) {
  PushDedup d(/*window=*/4);
  for (uint64_t s = 1; s <= 10; ++s) d.Record({0, 1, s}, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(d.size(), 4);
  EXPECT_EQ(d.Check({0, 1, 2}).outcome, PUSH_OUTCOME_DUPLICATE);
  EXPECT_EQ(d.Check({0, 1, 9}).outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(d.Check({0, 1, 11}).verdict, Verdict::kNew);
}

TEST(PushDedupTest, ForgetAcceptsARetry) {
  PushDedup d;
  d.Record({3, 1, 1}, PUSH_OUTCOME_AGGREGATED);
  d.Forget({3, 1, 1});
  EXPECT_EQ(d.Check({3, 1, 1}).verdict, Verdict::kNew);
}

TEST(PushDedupTest, SerializeRoundTripsAndRefusesGarbage) {
  PushDedup d(8);
  d.Record({0, 1, 1}, PUSH_OUTCOME_APPLIED);
  d.Record({5, 9, 3}, PUSH_OUTCOME_STALE);
  for (uint64_t s = 1; s <= 20; ++s) d.Record({2, 4, s}, PUSH_OUTCOME_AGGREGATED);
  const std::string bytes = d.Serialize();
  absl::StatusOr<PushDedup> back = PushDedup::Parse(bytes, 8);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == d);
  EXPECT_EQ(back->Check({2, 4, 3}).outcome, PUSH_OUTCOME_DUPLICATE);
  EXPECT_EQ(PushDedup::Parse(bytes.substr(0, bytes.size() - 3), 8).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(PushDedup::Parse(bytes + "x", 8).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace pstrain
