#include "common/optimizer/gradient_clipping.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(GradientClippingTest, SumOfSquaresInDouble) {
  EXPECT_EQ(SumOfSquares({}), 0.0);
  const std::vector<float> g = {3, -4};
  EXPECT_DOUBLE_EQ(SumOfSquares(g), 25.0);
  // 10^6 values of 10^-3 add up to 1 without float's rounding drift.
  const std::vector<float> many(1000000, 1e-3f);
  EXPECT_NEAR(SumOfSquares(many), 1e6 * 1e-6, 1e-6);
}

TEST(GradientClippingTest, ScalesOnlyAboveTheClipNorm) {
  EXPECT_EQ(GradientClipScale(5, 0), 1.0f);  // no clipping
  EXPECT_EQ(GradientClipScale(5, 10), 1.0f);
  EXPECT_EQ(GradientClipScale(10, 10), 1.0f);
  EXPECT_FLOAT_EQ(GradientClipScale(20, 10), 0.5f);
  // The clipped gradients' norm is the clip norm.
  const std::vector<float> g = {30, 40};
  const float scale = GradientClipScale(std::sqrt(SumOfSquares(g)), 5);
  EXPECT_NEAR(std::hypot(scale * g[0], scale * g[1]), 5.0, 1e-5);
  EXPECT_EQ(GradientClipScale(std::numeric_limits<double>::quiet_NaN(), 1), 1.0f);
}

}  // namespace
}  // namespace pstrain
