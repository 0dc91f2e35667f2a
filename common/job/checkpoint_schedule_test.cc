#include "common/job/checkpoint_schedule.h"

#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"

namespace pstrain {
namespace {

CheckpointSpec Every(int64_t steps, double seconds) {
  CheckpointSpec spec;
  spec.set_every_steps(steps);
  spec.set_every_seconds(seconds);
  return spec;
}

class CheckpointScheduleTest : public ::testing::Test {
 protected:
  FakeClock clock_;
};

TEST_F(CheckpointScheduleTest, EveryStepsCountsFromTheLastSave) {
  CheckpointSchedule schedule(Every(250, 0), clock_, 0);
  EXPECT_EQ(schedule.Due(200), CheckpointTrigger::kNone);
  EXPECT_EQ(schedule.Due(300), CheckpointTrigger::kSteps);
  schedule.RecordSaved(300, CheckpointKind::kPeriodic);
  EXPECT_EQ(schedule.Due(500), CheckpointTrigger::kNone);
  EXPECT_EQ(schedule.Due(550), CheckpointTrigger::kSteps);
  // Steps alone: no time-based saves, however long it runs.
  clock_.Advance(absl::Hours(10));
  EXPECT_EQ(schedule.Due(400), CheckpointTrigger::kNone);
  EXPECT_EQ(schedule.NextDueTime(), absl::InfiniteFuture());
}

TEST_F(CheckpointScheduleTest, EverySecondsCountsFromTheLastSave) {
  CheckpointSchedule schedule(Every(0, 60), clock_, 0);
  clock_.Advance(absl::Seconds(59));
  EXPECT_EQ(schedule.Due(10), CheckpointTrigger::kNone);
  EXPECT_EQ(schedule.NextDueTime(), clock_.Now() + absl::Seconds(1));
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(schedule.Due(10), CheckpointTrigger::kSeconds);
  schedule.RecordSaved(10, CheckpointKind::kPeriodic);
  EXPECT_EQ(schedule.NextDueTime(), clock_.Now() + absl::Seconds(60));
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(schedule.Due(1000000), CheckpointTrigger::kNone);
}

TEST_F(CheckpointScheduleTest, WhicheverComesFirst) {
  CheckpointSchedule schedule(Every(1000, 60), clock_, 0);
  EXPECT_EQ(schedule.Due(1000), CheckpointTrigger::kSteps);
  schedule.RecordSaved(1000, CheckpointKind::kPeriodic);
  clock_.Advance(absl::Seconds(60));
  EXPECT_EQ(schedule.Due(1100), CheckpointTrigger::kSeconds);
  schedule.RecordSaved(1100, CheckpointKind::kPeriodic);
  EXPECT_EQ(schedule.Due(2099), CheckpointTrigger::kNone);
  EXPECT_EQ(schedule.Due(2100), CheckpointTrigger::kSteps);
}

TEST_F(CheckpointScheduleTest, WithoutIntervalsEveryTenMinutes) {
  CheckpointSchedule schedule(Every(0, 0), clock_, 0);
  clock_.Advance(absl::Seconds(599));
  EXPECT_EQ(schedule.Due(5), CheckpointTrigger::kNone);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(schedule.Due(5), CheckpointTrigger::kSeconds);
}

TEST_F(CheckpointScheduleTest, NoProgressNoCheckpoint) {
  CheckpointSchedule schedule(Every(0, 60), clock_, 0);
  schedule.RecordSaved(500, CheckpointKind::kPeriodic);
  clock_.Advance(absl::Hours(1));
  // Workers stalled at step 500: saving again would only repeat ckpt-500.
  EXPECT_EQ(schedule.Due(500), CheckpointTrigger::kNone);
  EXPECT_EQ(schedule.Due(501), CheckpointTrigger::kSeconds);
}

TEST_F(CheckpointScheduleTest, ResumedJobCountsFromItsRestoredStep) {
  CheckpointSchedule schedule(Every(100, 0), clock_, 1200);
  EXPECT_EQ(schedule.last_saved_step(), 1200);
  EXPECT_EQ(schedule.Due(1250), CheckpointTrigger::kNone);
  EXPECT_EQ(schedule.Due(1300), CheckpointTrigger::kSteps);
}

// A checkpoint that failed (a full disk) is tried again one interval
// later: neither never again nor at every progress report.
TEST_F(CheckpointScheduleTest, AFailedCheckpointIsTriedAgainOneIntervalLater) {
  CheckpointSchedule schedule(Every(200, 60), clock_, 0);
  schedule.RecordSaved(400, CheckpointKind::kPeriodic);
  ASSERT_EQ(schedule.Due(600), CheckpointTrigger::kSteps);
  schedule.RecordFailed(600);
  EXPECT_EQ(schedule.last_saved_step(), 400);
  EXPECT_EQ(schedule.Due(700), CheckpointTrigger::kNone);
  EXPECT_EQ(schedule.NextDueTime(), clock_.Now() + absl::Seconds(60));
  EXPECT_EQ(schedule.Due(800), CheckpointTrigger::kSteps);
  schedule.RecordFailed(800);
  clock_.Advance(absl::Seconds(60));
  EXPECT_EQ(schedule.Due(801), CheckpointTrigger::kSeconds);
  schedule.RecordSaved(801, CheckpointKind::kPeriodic);
  EXPECT_EQ(schedule.last_saved_step(), 801);
  EXPECT_EQ(schedule.Due(1000), CheckpointTrigger::kNone);
  EXPECT_EQ(schedule.Due(1001), CheckpointTrigger::kSteps);
}

TEST_F(CheckpointScheduleTest, SaysWhenTheNextCheckpointIsDue) {
  CheckpointSchedule steps(Every(200, 0), clock_, 0);
  steps.RecordFailed(600);
  EXPECT_EQ(steps.DescribeNextDue(), "at step 800");
  CheckpointSchedule seconds(Every(0, 600), clock_, 0);
  clock_.Advance(absl::Seconds(90));
  EXPECT_EQ(seconds.DescribeNextDue(), "in 8m30s");
  CheckpointSchedule both(Every(200, 60), clock_, 0);
  both.RecordFailed(600);
  EXPECT_EQ(both.DescribeNextDue(), "at step 800 or in 1m, whichever comes first");
  clock_.Advance(absl::Minutes(5));
  EXPECT_EQ(both.DescribeNextDue(), "at the next progress report");  // overdue
}

TEST_F(CheckpointScheduleTest, FinalCheckpointIsAlwaysDueOnce) {
  CheckpointSchedule schedule(Every(100, 0), clock_, 0);
  schedule.RecordSaved(100, CheckpointKind::kPeriodic);
  // Even at the step of the last periodic checkpoint.
  EXPECT_EQ(schedule.DueAtEnd(), CheckpointTrigger::kFinal);
  schedule.RecordSaved(100, CheckpointKind::kFinal);
  EXPECT_EQ(schedule.DueAtEnd(), CheckpointTrigger::kNone);
}

}  // namespace
}  // namespace pstrain
