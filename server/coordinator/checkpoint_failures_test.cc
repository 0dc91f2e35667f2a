#include "server/coordinator/checkpoint_failures.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::HasSubstr;

const absl::Status kFull = absl::ResourceExhaustedError("ps/0: No space left on device");

TEST(CheckpointFailuresTest, EachFailureIsAnEventWithItsPlaceInTheRow) {
  CheckpointFailures failures(3);
  const CheckpointFailure first = failures.RecordFailed(600, CheckpointKind::kPeriodic, kFull);
  EXPECT_EQ(first.step(), 600);
  EXPECT_EQ(first.message(), "ps/0: No space left on device");
  EXPECT_EQ(first.consecutive_failures(), 1);
  EXPECT_EQ(first.max_consecutive_failures(), 3);
  EXPECT_FALSE(first.final());
  EXPECT_EQ(failures.RecordFailed(800, CheckpointKind::kPeriodic, kFull).consecutive_failures(), 2);
  JobStatus status;
  failures.FillStatus(status);
  EXPECT_EQ(status.checkpoint_failures(), 2);
  EXPECT_EQ(status.last_checkpoint_failure(),
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
  JobStatus status;
  failures.FillStatus(status);
  EXPECT_EQ(status.checkpoint_failures(), 3);  // every failure of the job
}

TEST(CheckpointFailuresTest, ZeroNeverFailsTheJob) {
  CheckpointFailures failures(0);
  for (int64_t step = 100; step <= 1000; step += 100)
    failures.RecordFailed(step, CheckpointKind::kPeriodic, kFull);
  EXPECT_EQ(failures.TooMany(), std::nullopt);
  JobStatus status;
  failures.FillStatus(status);
  EXPECT_EQ(status.last_checkpoint_failure(),
            "ckpt-1000 (10 in a row): ps/0: No space left on device");
}

TEST(CheckpointFailuresTest, TheFinalCheckpointIsNamedSo) {
  CheckpointFailures failures(3);
  EXPECT_TRUE(failures.RecordFailed(3000, CheckpointKind::kFinal, kFull).final());
  JobStatus status;
  failures.FillStatus(status);
  EXPECT_THAT(status.last_checkpoint_failure(), HasSubstr("the final ckpt-3000 (1 in a row"));
  JobStatus none;
  CheckpointFailures(3).FillStatus(none);
  EXPECT_EQ(none.checkpoint_failures(), 0);
  EXPECT_EQ(none.last_checkpoint_failure(), "");
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
