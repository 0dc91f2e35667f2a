#include "common/config/metric_names.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(MetricNamesTest, KnowsTheDocumentedMetrics) {
  EXPECT_EQ(KnownMetricNames().size(), 7);
  for (absl::string_view name : KnownMetricNames()) {
    EXPECT_TRUE(IsKnownMetricName(name)) << name;
    EXPECT_NE(DefaultMetricDirection(name), METRIC_DIRECTION_UNSPECIFIED) << name;
  }
  EXPECT_FALSE(IsKnownMetricName("f1"));
  EXPECT_FALSE(IsKnownMetricName("Loss"));
}

TEST(MetricNamesTest, LowerIsBetterForErrorsOnly) {
  EXPECT_EQ(DefaultMetricDirection("loss"), METRIC_DIRECTION_MINIMIZE);
  EXPECT_EQ(DefaultMetricDirection("mse"), METRIC_DIRECTION_MINIMIZE);
  EXPECT_EQ(DefaultMetricDirection("accuracy"), METRIC_DIRECTION_MAXIMIZE);
  EXPECT_EQ(DefaultMetricDirection("auc"), METRIC_DIRECTION_MAXIMIZE);
  EXPECT_EQ(DefaultMetricDirection("f1"), METRIC_DIRECTION_UNSPECIFIED);
}

}  // namespace
}  // namespace pstrain
