#include "common/optimizer/gradient_clipping.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
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

// A step's gradients: dense "w" and "b", and two rows of table "emb".
Gradients StepGradients() {
  Gradients g;
  g.dense["w"] = Tensor::FromValues<float>(Shape({2, 2}), {1, 2, 3, 4}).value();
  g.dense["b"] = Tensor::FromValues<float>(Shape({1}), {2}).value();
  g.rows["emb"].ids = {42, 7};
  g.rows["emb"].values = Tensor::FromValues<float>(Shape({2, 2}), {10, -10, 0, 2}).value();
  return g;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

TEST(GradientClippingTest, GlobalNormTakesEveryDenseAndRowGradient) {
  EXPECT_DOUBLE_EQ(GlobalNorm(StepGradients()), std::sqrt(30 + 4 + 204.0));
  EXPECT_EQ(GlobalNorm(Gradients()), 0.0);
}

TEST(GradientClippingTest, ClipsEveryGradientByTheOneGlobalFactor) {
  Gradients g = StepGradients();
  const double norm = std::sqrt(238.0);
  EXPECT_DOUBLE_EQ(ClipByGlobalNorm(1.0, &g), norm);
  const float scale = static_cast<float>(1.0 / norm);
  using ::testing::ElementsAre;
  using ::testing::FloatEq;
  EXPECT_THAT(Values(g.dense["w"]),
              ElementsAre(FloatEq(scale), FloatEq(2 * scale), FloatEq(3 * scale), FloatEq(4 * scale)));
  EXPECT_THAT(Values(g.dense["b"]), ElementsAre(FloatEq(2 * scale)));
  EXPECT_THAT(Values(g.rows["emb"].values),
              ElementsAre(FloatEq(10 * scale), FloatEq(-10 * scale), 0, FloatEq(2 * scale)));
  EXPECT_EQ(g.rows["emb"].ids, (std::vector<int64_t>{42, 7}));
  EXPECT_NEAR(GlobalNorm(g), 1.0, 1e-6);
}

TEST(GradientClippingTest, LeavesGradientsUnderTheBoundAndWhenOff) {
  const Gradients before = StepGradients();
  Gradients under = StepGradients();
  EXPECT_DOUBLE_EQ(ClipByGlobalNorm(100, &under), std::sqrt(238.0));
  Gradients off = StepGradients();
  EXPECT_EQ(ClipByGlobalNorm(0, &off), 0.0);
  for (const Gradients* g : {&under, &off}) {
    EXPECT_EQ(Values(g->dense.at("w")), Values(before.dense.at("w")));
    EXPECT_EQ(Values(g->dense.at("b")), Values(before.dense.at("b")));
    EXPECT_EQ(Values(g->rows.at("emb").values), Values(before.rows.at("emb").values));
  }
}

TEST(GradientClippingTest, ANonFiniteNormScalesNothing) {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity()}) {
    Gradients g = StepGradients();
    g.rows["emb"].values.data<float>()[1] = bad;
    EXPECT_FALSE(std::isfinite(ClipByGlobalNorm(1.0, &g)));
    EXPECT_EQ(g.dense["w"].data<float>()[3], 4.0f);
    EXPECT_EQ(g.rows["emb"].values.data<float>()[0], 10.0f);
  }
}

}  // namespace
}  // namespace pstrain
