#include "common/model/layers/dot_interaction.h"

#include <vector>

#include "common/model/layers/gradient_check.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::Dot;
using testing_util::GradientsNear;
using testing_util::NumericalGradient;
using testing_util::RandomValues;

TEST(DotInteractionTest, FirstVectorThenLowerTrianglePairsInReferenceOrder) {
  // Three vectors of dim 2: a, b, c.
  DotInteraction layer(3, 2);
  EXPECT_EQ(layer.output_dim(), 2 + 3);
  EXPECT_EQ(layer.pairs(), (std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {2, 0}, {2, 1}}));
  const std::vector<float> x = {1, 2, /*b*/ 3, 4, /*c*/ -1, 0.5f,
                                // a second example
                                0, 1, 1, 0, 2, 2};
  std::vector<float> out(2 * 5);
  ASSERT_TRUE(layer.Forward(2, x.data(), out.data()).ok());
  // a, then b.a, c.a, c.b; no a.a.
  EXPECT_EQ(out, (std::vector<float>{1, 2, 11, 0, -1, 0, 1, 0, 2, 2}));
}

TEST(DotInteractionTest, GradientMatchesNumerical) {
  const int64_t n = 4, dim = 3, batch = 2;
  DotInteraction layer(n, dim);
  std::vector<float> x = RandomValues(batch * n * dim, -1, 1, 7);
  const std::vector<float> r = RandomValues(batch * layer.output_dim(), -1, 1, 8);
  std::vector<float> out(batch * layer.output_dim());
  auto loss = [&] {
    EXPECT_TRUE(layer.Forward(batch, x.data(), out.data()).ok());
    return Dot(out.data(), r.data(), out.size());
  };
  const std::vector<double> numeric = NumericalGradient(loss, x.data(), x.size());
  std::vector<float> dx(x.size());
  ASSERT_TRUE(layer.Backward(batch, x.data(), r.data(), dx.data()).ok());
  EXPECT_TRUE(GradientsNear(dx.data(), numeric));
}

TEST(DotInteractionTest, RefusesAnEmptyBatch) {
  DotInteraction layer(2, 2);
  float unused = 0;
  EXPECT_EQ(layer.Forward(0, &unused, &unused).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(layer.Backward(0, &unused, &unused, &unused).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
