#include "common/job/checkpoint_failures.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

const absl::Status kFull = absl::ResourceExhaustedError("ps/0: No space left on device");

TEST(CheckpointFailuresTest, EachFailureIsToldWithItsPlaceInTheRow) {
  CheckpointFailures failures(3);
  const FailedCheckpoint first = failures.RecordFailed(600, CheckpointKind::kPeriodic, kFull);
  EXPECT_EQ(first.step, 600);
  EXPECT_EQ(first.message, "ps/0: No space left on device");
  EXPECT_EQ(first.consecutive, 1);
  EXPECT_EQ(first.max_consecutive, 3);
  EXPECT_FALSE(first.final);
  EXPECT_EQ(failures.RecordFailed(800, CheckpointKind::kPeriodic, kFull).consecutive, 2);
  EXPECT_EQ(failures.total(), 2);
  EXPECT_EQ(failures.DescribeLast(),
            "ckpt-800 (2 in a row of at most 3): ps/0: No space left on device");
}

TEST(CheckpointFailuresTest, TheLimitInARowFailsTheJobAndASaveStartsTheCountAgain) {
  CheckpointFailures failures(2);
  failures.RecordFailed(600, CheckpointKind::kPeriodic, kFull);
  EXPECT_EQ(failures.TooMany(), std::nullopt);
  failures.RecordSaved();
  failures.RecordFailed(1000, CheckpointKind::kPeriodic, kFull);
  EXPECT_EQ(failures.TooMany(), std::nullopt);  // one in a row: the save came between
  failures.RecordFailed(1200, CheckpointKind::kPeriodic, kFull);
  const std::optional<std::string> why = failures.TooMany();
  ASSERT_TRUE(why.has_value());
  EXPECT_THAT(*why, HasSubstr("2 checkpoints failed in a row "
                              "(checkpoint.max_consecutive_failures 2), the last, ckpt-1200: "
                              "ps/0: No space left on device"));
  EXPECT_THAT(*why, HasSubstr("make room in checkpoint.model_dir"));
  EXPECT_EQ(failures.total(), 3);  // every failure of the job
}

TEST(CheckpointFailuresTest, ZeroNeverFailsTheJob) {
  CheckpointFailures failures(0);
  for (int64_t step = 100; step <= 1000; step += 100)
    failures.RecordFailed(step, CheckpointKind::kPeriodic, kFull);
  EXPECT_EQ(failures.TooMany(), std::nullopt);
  EXPECT_EQ(failures.DescribeLast(), "ckpt-1000 (10 in a row): ps/0: No space left on device");
}

TEST(CheckpointFailuresTest, TheFinalCheckpointIsNamedSo) {
  CheckpointFailures failures(3);
  EXPECT_TRUE(failures.RecordFailed(3000, CheckpointKind::kFinal, kFull).final);
  EXPECT_THAT(failures.DescribeLast(), HasSubstr("the final ckpt-3000 (1 in a row"));
  const CheckpointFailures none(3);
  EXPECT_EQ(none.total(), 0);
  EXPECT_EQ(none.DescribeLast(), "");
}

}  // namespace
}  // namespace pstrain
