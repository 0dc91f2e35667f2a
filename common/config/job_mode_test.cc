#include "common/config/job_mode.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(JobModeTest, TrainsAndEvaluates) {
  EXPECT_TRUE(JobModeTrains(JOB_MODE_TRAIN));
  EXPECT_FALSE(JobModeEvaluates(JOB_MODE_TRAIN));

  EXPECT_FALSE(JobModeTrains(JOB_MODE_EVAL));
  EXPECT_TRUE(JobModeEvaluates(JOB_MODE_EVAL));

  EXPECT_TRUE(JobModeTrains(JOB_MODE_TRAIN_AND_EVAL));
  EXPECT_TRUE(JobModeEvaluates(JOB_MODE_TRAIN_AND_EVAL));

  EXPECT_FALSE(JobModeTrains(JOB_MODE_CONTINUOUS_EVAL));
  EXPECT_TRUE(JobModeEvaluates(JOB_MODE_CONTINUOUS_EVAL));

  // Unset means TRAIN_AND_EVAL.
  EXPECT_TRUE(JobModeTrains(JOB_MODE_UNSPECIFIED));
  EXPECT_TRUE(JobModeEvaluates(JOB_MODE_UNSPECIFIED));

  // A value from a newer client that this build does not know.
  EXPECT_FALSE(JobModeTrains(static_cast<JobMode>(42)));
  EXPECT_FALSE(JobModeEvaluates(static_cast<JobMode>(42)));
}

}  // namespace
}  // namespace pstrain
