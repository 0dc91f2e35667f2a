#include "client/progress_line.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

ProgressSnapshot Snapshot() {
  ProgressSnapshot progress;
  progress.global_step = 120;
  progress.max_steps = 300;
  progress.examples_per_sec = 2345.4;
  progress.loss = 0.43121;
  return progress;
}

TEST(ProgressLineTest, BarShowsFractionStepRateLossMetricAndEta) {
  ProgressSnapshot progress = Snapshot();
  progress.eval_metric = "accuracy";
  progress.eval_value = 0.81234;
  progress.eta = absl::Seconds(42);
  EXPECT_EQ(FormatProgressBar(progress),
            "[########------------]  40%  step 120/300  2345 ex/s  loss 0.4312  accuracy 0.8123"
            "  ETA 42s");
}

TEST(ProgressLineTest, PlainLineKeepsTheLogFormat) {
  EXPECT_EQ(FormatProgressLine(Snapshot()),
            "step 120/300      loss 0.4312      2345 examples/s");
}

TEST(ProgressLineTest, NoStepLimitMeansNoBar) {
  ProgressSnapshot progress = Snapshot();
  progress.max_steps = 0;
  EXPECT_EQ(FormatProgressBar(progress), "step 120  2345 ex/s  loss 0.4312");
}

TEST(ProgressLineTest, BarIsFullAtTheEndAndNeverOverflows) {
  ProgressSnapshot progress = Snapshot();
  progress.global_step = 310;  // async jobs overshoot max_steps a little
  EXPECT_EQ(FormatProgressBar(progress).substr(0, 28), "[####################] 100% ");
}

TEST(ProgressLineTest, EtaIsReadable) {
  EXPECT_EQ(FormatEta(absl::Seconds(5.7)), "5s");
  EXPECT_EQ(FormatEta(absl::Seconds(185)), "3m05s");
  EXPECT_EQ(FormatEta(absl::Seconds(3720)), "1h02m");
  EXPECT_EQ(FormatEta(absl::Seconds(-3)), "0s");
}

TEST(StepRateEstimatorTest, EtaFollowsTheRecentRate) {
  StepRateEstimator rate;
  const absl::Time start = absl::FromUnixSeconds(1000);
  EXPECT_FALSE(rate.Eta(300).has_value());
  rate.Add(0, start);
  EXPECT_FALSE(rate.Eta(300).has_value());  // one sample is no rate
  rate.Add(100, start + absl::Seconds(10));  // 10 steps/s
  ASSERT_TRUE(rate.Eta(300).has_value());
  EXPECT_EQ(*rate.Eta(300), absl::Seconds(20));
  EXPECT_FALSE(rate.Eta(0).has_value());
  // Slower for a long while: the estimate follows the new rate.
  for (int i = 1; i <= 10; ++i) rate.Add(100 + 5 * 5 * i, start + absl::Seconds(10 + 5 * i));
  ASSERT_TRUE(rate.Eta(500).has_value());
  // At step 350, 150 steps left at 5 steps/s: 30 s (the window still
  // holds a little of the fast start, so a little less).
  EXPECT_NEAR(absl::ToDoubleSeconds(*rate.Eta(500)), 30, 4);
}

TEST(StepRateEstimatorTest, StartsOverWhenTheStepGoesBack) {
  StepRateEstimator rate;
  const absl::Time start = absl::FromUnixSeconds(1000);
  rate.Add(500, start);
  rate.Add(600, start + absl::Seconds(1));
  rate.Add(100, start + absl::Seconds(2));  // restored an older checkpoint
  EXPECT_FALSE(rate.Eta(1000).has_value());
}

}  // namespace
}  // namespace pstrain
