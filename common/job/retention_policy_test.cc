#include "common/job/retention_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(RetentionPolicyTest, KeepsTheNewestMaxToKeep) {
  RetentionPolicy policy(3);
  EXPECT_THAT(policy.ToDelete({500, 100, 400, 200, 300}), ElementsAre(100, 200));
}

TEST(RetentionPolicyTest, ZeroKeepsEverything) {
  RetentionPolicy policy(0);
  EXPECT_THAT(policy.ToDelete({100, 200, 300}), IsEmpty());
}

TEST(RetentionPolicyTest, NeverDeletesTheNewest) {
  RetentionPolicy policy(1);
  EXPECT_THAT(policy.ToDelete({100, 200, 300}), ElementsAre(100, 200));
  EXPECT_THAT(RetentionPolicy(1).ToDelete({300}), IsEmpty());
}

TEST(RetentionPolicyTest, LeasedCheckpointIsNotDeletedUntilReleased) {
  RetentionPolicy policy(2);
  ASSERT_TRUE(policy.Acquire(100, "evaluator/0#1").ok());
  EXPECT_THAT(policy.ToDelete({100, 200, 300, 400}), ElementsAre(200));
  ASSERT_TRUE(policy.Release(100, "evaluator/0#1").ok());
  EXPECT_THAT(policy.ToDelete({100, 300, 400}), ElementsAre(100));
}

TEST(RetentionPolicyTest, EveryHolderMustRelease) {
  RetentionPolicy policy(1);
  ASSERT_TRUE(policy.Acquire(100, "evaluator/0#1").ok());
  ASSERT_TRUE(policy.Acquire(100, "watch#7").ok());
  ASSERT_TRUE(policy.Acquire(100, "watch#7").ok());  // idempotent
  ASSERT_TRUE(policy.Release(100, "evaluator/0#1").ok());
  EXPECT_TRUE(policy.IsLeased(100));
  EXPECT_THAT(policy.ToDelete({100, 200}), IsEmpty());
  ASSERT_TRUE(policy.Release(100, "watch#7").ok());
  EXPECT_FALSE(policy.IsLeased(100));
  EXPECT_THAT(policy.ToDelete({100, 200}), ElementsAre(100));
}

TEST(RetentionPolicyTest, LostEvaluatorsLeasesAreReleased) {
  RetentionPolicy policy(1);
  ASSERT_TRUE(policy.Acquire(100, "evaluator/0#1").ok());
  ASSERT_TRUE(policy.Acquire(200, "evaluator/0#1").ok());
  ASSERT_TRUE(policy.Acquire(200, "evaluator/0#2").ok());
  EXPECT_EQ(policy.ReleaseHolder("evaluator/0#1"), 2);
  EXPECT_THAT(policy.ToDelete({100, 200, 300}), ElementsAre(100));
}

TEST(RetentionPolicyTest, CheckpointChosenForDeletionCannotBeLeased) {
  RetentionPolicy policy(1);
  ASSERT_THAT(policy.ToDelete({100, 200}), ElementsAre(100));
  absl::Status status = policy.Acquire(100, "evaluator/0#1");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(policy.IsLeased(100));
  EXPECT_TRUE(policy.Acquire(200, "evaluator/0#1").ok());
}

TEST(RetentionPolicyTest, FailedDeletionIsChosenAgainAndDoneOnesForgotten) {
  RetentionPolicy policy(1);
  ASSERT_THAT(policy.ToDelete({100, 200, 300}), ElementsAre(100, 200));
  // 100 was deleted, 200's deletion failed.
  EXPECT_THAT(policy.ToDelete({200, 300}), ElementsAre(200));
  // A step number that comes back (a resumed job saving it anew) is leasable.
  EXPECT_THAT(policy.ToDelete({300}), IsEmpty());
  EXPECT_TRUE(policy.Acquire(100, "evaluator/0#1").ok());
}

TEST(RetentionPolicyTest, BadLeasesAreRefused) {
  RetentionPolicy policy(1);
  EXPECT_EQ(policy.Acquire(-1, "e").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(policy.Acquire(1, "").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(policy.Release(1, "e").code(), absl::StatusCode::kNotFound);
}

TEST(RetentionPolicyTest, DuplicateStepsCountOnce) {
  RetentionPolicy policy(2);
  EXPECT_THAT(policy.ToDelete({300, 300, 200, 100}), ElementsAre(100));
}

}  // namespace
}  // namespace pstrain
