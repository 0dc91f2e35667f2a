#include "tests/job_output.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace testing_jobs {
namespace {

constexpr char kWatched[] =
    "job clicks-1: RUNNING\n"
    "step 87/200       loss 0.6012      9000 examples/s\n"
    "checkpoint at step 100: /tmp/m/ckpt-100\n"
    "step 187/200      loss 0.5011      9100 examples/s  ETA 0s\n"
    "step 212/200      loss 0.4990      9100 examples/s  ETA 0s\n"
    "job clicks-1 SUCCEEDED at step 212: reached max_steps 200\n"
    "final evaluation (step 212): auc 0.8100\n";

TEST(JobOutputTest, ProgressStepsReadsEveryPlainProgressLineOfTheLimit) {
  EXPECT_EQ(ProgressSteps(kWatched, 200), (std::vector<int64_t>{87, 187, 212}));
  EXPECT_TRUE(ProgressSteps(kWatched, 300).empty());
  EXPECT_TRUE(ProgressSteps("", 200).empty());
}

TEST(JobOutputTest, FinalStepReadsTheStepOfTheEndInThatState) {
  EXPECT_EQ(FinalStep(kWatched, "SUCCEEDED"), 212);
  EXPECT_EQ(FinalStep(kWatched, "FAILED"), std::nullopt);
  EXPECT_EQ(FinalStep("job x STOPPED at step 5\n", "STOPPED"), 5);
  EXPECT_EQ(FinalStep("job x SUCCEEDED at step many\n", "SUCCEEDED"), std::nullopt);
}

}  // namespace
}  // namespace testing_jobs
}  // namespace pstrain
