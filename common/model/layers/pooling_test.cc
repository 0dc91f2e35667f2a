#include "common/model/layers/pooling.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "common/model/layers/gradient_check.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::Dot;
using testing_util::GradientsNear;
using testing_util::NumericalGradient;
using testing_util::RandomValues;

class PoolingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto context = ComputeContext::Create();
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = std::move(context).value();
  }
  std::unique_ptr<ComputeContext> context_;
};

TEST_F(PoolingTest, ForwardByHand) {
  // One 4x4 image, one channel.
  const std::vector<float> x = {1,  2,  3,  4,   //
                                5,  6,  7,  8,   //
                                9,  10, 11, 12,  //
                                13, 14, 15, 16};
  std::vector<float> y(4);
  Pooling max(context_.get(), PoolingKind::kMax, 2, 2);
  ASSERT_TRUE(max.Forward(1, 4, 4, 1, x.data(), y.data()).ok());
  EXPECT_EQ(y, (std::vector<float>{6, 8, 14, 16}));
  Pooling avg(context_.get(), PoolingKind::kAverage, 2, 2);
  ASSERT_TRUE(avg.Forward(1, 4, 4, 1, x.data(), y.data()).ok());
  EXPECT_EQ(y, (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));
}

TEST_F(PoolingTest, BackwardMatchesNumericalGradient) {
  const int64_t n = 2, h = 5, w = 4, c = 3;
  const int64_t size = n * h * w * c;
  // Distinct values 0.1 apart, shuffled: no finite-difference step changes
  // which element is a window's maximum.
  std::vector<float> x(size);
  std::iota(x.begin(), x.end(), 0.0f);
  std::shuffle(x.begin(), x.end(), std::mt19937(1));
  for (float& v : x) v *= 0.1f;
  for (PoolingKind kind : {PoolingKind::kMax, PoolingKind::kAverage}) {
    for (int64_t stride : {1, 2}) {
      Pooling layer(context_.get(), kind, 2, stride);
      const int64_t out = n * layer.OutputSize(h) * layer.OutputSize(w) * c;
      const std::vector<float> r = RandomValues(out, -1, 1, 7);
      std::vector<float> y(out), dx(size);
      auto loss = [&] {
        EXPECT_TRUE(layer.Forward(n, h, w, c, x.data(), y.data()).ok());
        return Dot(y.data(), r.data(), out);
      };
      loss();
      ASSERT_TRUE(layer.Backward(n, h, w, c, r.data(), dx.data()).ok());
      EXPECT_TRUE(GradientsNear(dx.data(), NumericalGradient(loss, x.data(), size, 1e-2)))
          << "kind " << static_cast<int>(kind) << " stride " << stride;
    }
  }
}

TEST_F(PoolingTest, RefusesImagesSmallerThanTheWindow) {
  Pooling layer(context_.get(), PoolingKind::kMax, 3, 1);
  std::vector<float> x(4), y(1);
  EXPECT_EQ(layer.Forward(1, 2, 2, 1, x.data(), y.data()).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
