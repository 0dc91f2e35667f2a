#include "server/ps/staged_round.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<float> Values(const StagedPush& push) {
  const std::vector<GradientRef> refs = push.gradients.refs();
  return std::vector<float>(refs.at(0).values.begin(), refs.at(0).values.end());
}

StagedPush Push(PushKey key, float value, int64_t lease = 0) {
  const std::vector<float> g = {value, value};
  PushSource source{2, std::nullopt};
  if (lease > 0) source.origin = LeaseSlice{lease, 0, 0, 2};
  return StagedPush{key, source, GradientCopy({GradientRef{0, false, {}, g, {}}})};
}

std::vector<int> Workers(const std::vector<PushKey>& keys) {
  std::vector<int> workers;
  for (const PushKey& k : keys) workers.push_back(k.worker);
  return workers;
}

TEST(StagedRoundTest, HoldsOnePushPerRankAndANewerOneReplacesIt) {
  StagedRound round(3);
  EXPECT_EQ(round.Find(1), nullptr);
  EXPECT_FALSE(round.Put(Push({1, 1, 4}, 1.0f)).has_value());
  EXPECT_TRUE(round.Holds({1, 1, 4}));
  EXPECT_FALSE(round.Holds({1, 1, 5}));
  EXPECT_FALSE(round.Holds({7, 1, 4}));  // no such rank: held by nobody
  // The rank's worker restarted and pushed the round again.
  const std::optional<PushKey> replaced = round.Put(Push({1, 2, 1}, 5.0f));
  ASSERT_TRUE(replaced.has_value());
  EXPECT_EQ(*replaced, (PushKey{1, 1, 4}));
  EXPECT_FALSE(round.Holds({1, 1, 4}));
  ASSERT_NE(round.Find(1), nullptr);
  EXPECT_THAT(Values(*round.Find(1)), ElementsAre(5.0f, 5.0f));
}

TEST(StagedRoundTest, CommitTakesTheMembersInRankOrderAndDropsTheRest) {
  StagedRound round(4);
  round.Put(Push({3, 1, 1}, 3.0f));
  round.Put(Push({0, 1, 1}, 0.5f));
  round.Put(Push({2, 1, 1}, 2.0f));
  std::vector<PushKey> dropped;
  const std::vector<StagedPush> members = round.Commit({{3, 1, 1}, {0, 1, 1}}, &dropped);
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].key, (PushKey{0, 1, 1}));
  EXPECT_EQ(members[1].key, (PushKey{3, 1, 1}));
  EXPECT_THAT(Values(members[1]), ElementsAre(3.0f, 3.0f));
  EXPECT_THAT(Workers(dropped), ElementsAre(2));
  EXPECT_THAT(round.keys(), IsEmpty());
}

TEST(StagedRoundTest, DropsThePushesOfHandedBackLeases) {
  StagedRound round(3);
  round.Put(Push({0, 1, 1}, 1.0f, 7));
  round.Put(Push({1, 1, 1}, 1.0f, 8));
  round.Put(Push({2, 1, 1}, 1.0f));  // names no lease
  EXPECT_THAT(Workers(round.DropLeases({7, 9})), ElementsAre(0));
  EXPECT_THAT(Workers(round.keys()), ElementsAre(1, 2));
  EXPECT_THAT(Workers(round.Clear()), ElementsAre(1, 2));
  EXPECT_THAT(round.keys(), IsEmpty());
}

TEST(StagedRoundTest, MembersAreDistinctRanksInRange) {
  EXPECT_TRUE(StagedRound::ValidateMembers({{0, 1, 1}, {2, 3, 9}}, 3).ok());
  for (const std::vector<PushKey>& bad : std::vector<std::vector<PushKey>>{
           {}, {{3, 1, 1}}, {{-1, 1, 1}}, {{0, 0, 1}}, {{0, 1, 0}}, {{1, 1, 1}, {1, 2, 1}}}) {
    EXPECT_EQ(StagedRound::ValidateMembers(bad, 3).code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace pstrain
