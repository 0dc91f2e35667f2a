#include "client/report/scalar_series.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(ScalarSeriesTest, GroupsByTagPreferredFirstAndSortsBySteps) {
  const std::vector<ScalarRecord> records = {
      {20, 0, "zeta", 1},  {10, 0, "loss", 0.9},          {5, 0, "alpha", 3},
      {5, 0, "loss", 1.2}, {10, 0, "learning_rate", 0.1},
  };
  const std::vector<ScalarSeries> series =
      GroupScalarSeries(records, {"loss", "learning_rate", "examples_per_sec"});
  ASSERT_EQ(series.size(), 4u);
  EXPECT_EQ(series[0].tag, "loss");
  EXPECT_EQ(series[1].tag, "learning_rate");
  EXPECT_EQ(series[2].tag, "alpha");
  EXPECT_EQ(series[3].tag, "zeta");
  ASSERT_EQ(series[0].points.size(), 2u);
  EXPECT_EQ(series[0].points[0].step, 5);
  EXPECT_EQ(series[0].points[0].value, 1.2);
  EXPECT_EQ(series[0].points[1].step, 10);
}

TEST(ScalarSeriesTest, NonFiniteValuesAreSetApartAndARedoneStepKeepsItsLastValue) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<ScalarRecord> records = {
      {1, 0, "loss", 2},   {2, 0, "loss", nan},    {3, 0, "loss", inf},
      {2, 0, "loss", 1.5}, {1, 0, "broken", -inf},
  };
  const std::vector<ScalarSeries> series = GroupScalarSeries(records);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].tag, "broken");
  EXPECT_TRUE(series[0].points.empty());
  ASSERT_EQ(series[0].non_finite.size(), 1u);
  const ScalarSeries& loss = series[1];
  ASSERT_EQ(loss.points.size(), 2u);
  EXPECT_EQ(loss.points[1].step, 2);
  EXPECT_EQ(loss.points[1].value, 1.5);
  ASSERT_EQ(loss.non_finite.size(), 2u);
  EXPECT_TRUE(std::isnan(loss.non_finite[0].value));
  EXPECT_EQ(loss.non_finite[1].step, 3);
}

}  // namespace
}  // namespace pstrain
