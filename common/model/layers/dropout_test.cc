#include "common/model/layers/dropout.h"

#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(DropoutTest, DropsAboutRateAndKeepsTheMean) {
  Dropout layer(0.25f, 1);
  const int64_t n = 100000;
  std::vector<float> x(n, 2.0f), y(n);
  ASSERT_TRUE(layer.Forward(n, x.data(), y.data(), PassMode::kTrain).ok());
  int64_t dropped = 0;
  double sum = 0;
  for (float v : y) {
    if (v == 0) {
      ++dropped;
    } else {
      EXPECT_FLOAT_EQ(v, 2.0f / 0.75f);
    }
    sum += v;
  }
  EXPECT_NEAR(static_cast<double>(dropped) / n, 0.25, 0.01);
  EXPECT_NEAR(sum / n, 2.0, 0.03);
}

TEST(DropoutTest, IdentityAtEval) {
  Dropout layer(0.5f, 1);
  std::vector<float> x = {1, 2, 3}, y(3);
  ASSERT_TRUE(layer.Forward(3, x.data(), y.data(), PassMode::kEval).ok());
  EXPECT_EQ(y, x);
}

TEST(DropoutTest, SeededAndBackwardUsesTheSameMask) {
  Dropout a(0.5f, 7), b(0.5f, 7), c(0.5f, 8);
  std::vector<float> x(64, 1.0f), ya(64), yb(64), yc(64);
  ASSERT_TRUE(a.Forward(64, x.data(), ya.data(), PassMode::kTrain).ok());
  ASSERT_TRUE(b.Forward(64, x.data(), yb.data(), PassMode::kTrain).ok());
  ASSERT_TRUE(c.Forward(64, x.data(), yc.data(), PassMode::kTrain).ok());
  EXPECT_EQ(ya, yb);
  EXPECT_NE(ya, yc);
  // y is linear in x with the mask as slope, so dx = dy * y / x.
  std::vector<float> dy(64, 3.0f), dx(64);
  ASSERT_TRUE(a.Backward(64, dy.data(), dx.data()).ok());
  for (int i = 0; i < 64; ++i) EXPECT_FLOAT_EQ(dx[i], 3.0f * ya[i]);
  EXPECT_EQ(a.Backward(32, dy.data(), dx.data()).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace pstrain
