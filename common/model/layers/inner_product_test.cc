#include "common/model/layers/inner_product.h"

#include <memory>
#include <vector>

#include "common/model/layers/gradient_check.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::Dot;
using testing_util::GradientsNear;
using testing_util::NumericalGradient;
using testing_util::RandomValues;

class InnerProductTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto context = ComputeContext::Create();
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = std::move(context).value();
  }
  std::unique_ptr<ComputeContext> context_;
};

TEST_F(InnerProductTest, ForwardMatchesHandComputedProduct) {
  InnerProduct layer(context_.get(), 3, 2);
  // x [2, 3], w [3, 2] row-major, b [2].
  const std::vector<float> x = {1, 2, 3, -1, 0, 2};
  const std::vector<float> w = {1, 0.5f, 2, -1, 0, 3};
  const std::vector<float> b = {0.25f, -0.5f};
  std::vector<float> y(4);
  ASSERT_TRUE(layer.Forward(2, x.data(), w.data(), b.data(), y.data()).ok());
  // Row 0: 1*1 + 2*2 + 3*0 + 0.25 = 5.25;  1*0.5 + 2*-1 + 3*3 - 0.5 = 7.
  // Row 1: -1 + 0 + 0 + 0.25 = -0.75;  -0.5 + 0 + 6 - 0.5 = 5.
  EXPECT_FLOAT_EQ(y[0], 5.25f);
  EXPECT_FLOAT_EQ(y[1], 7.0f);
  EXPECT_FLOAT_EQ(y[2], -0.75f);
  EXPECT_FLOAT_EQ(y[3], 5.0f);

  std::vector<float> no_bias(4);
  ASSERT_TRUE(layer.Forward(2, x.data(), w.data(), nullptr, no_bias.data()).ok());
  EXPECT_FLOAT_EQ(no_bias[0], 5.0f);
  EXPECT_FLOAT_EQ(no_bias[3], 5.5f);
}

TEST_F(InnerProductTest, BackwardMatchesNumericalGradient) {
  const int64_t batch = 4, in = 5, out = 3;
  InnerProduct layer(context_.get(), in, out);
  std::vector<float> x = RandomValues(batch * in, -1, 1, 1);
  std::vector<float> w = RandomValues(in * out, -1, 1, 2);
  std::vector<float> b = RandomValues(out, -1, 1, 3);
  const std::vector<float> r = RandomValues(batch * out, -1, 1, 4);
  std::vector<float> y(batch * out);
  auto loss = [&] {
    EXPECT_TRUE(layer.Forward(batch, x.data(), w.data(), b.data(), y.data()).ok());
    return Dot(y.data(), r.data(), batch * out);
  };
  std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
  ASSERT_TRUE(
      layer.Backward(batch, x.data(), w.data(), r.data(), dx.data(), dw.data(), db.data()).ok());
  EXPECT_TRUE(GradientsNear(dx.data(), NumericalGradient(loss, x.data(), x.size())));
  EXPECT_TRUE(GradientsNear(dw.data(), NumericalGradient(loss, w.data(), w.size())));
  EXPECT_TRUE(GradientsNear(db.data(), NumericalGradient(loss, b.data(), b.size())));
}

TEST_F(InnerProductTest, BackwardWithoutDataOrBiasGradient) {
  InnerProduct layer(context_.get(), 2, 2);
  const std::vector<float> x = {1, 2};
  const std::vector<float> w = {1, 1, 1, 1};
  const std::vector<float> dy = {1, -1};
  std::vector<float> dw(4);
  ASSERT_TRUE(layer.Backward(1, x.data(), w.data(), dy.data(), nullptr, dw.data(), nullptr).ok());
  // dw[i][o] = x[i] * dy[o].
  EXPECT_EQ(dw, (std::vector<float>{1, -1, 2, -2}));
}

TEST_F(InnerProductTest, ReusesPrimitivesPerBatchSize) {
  InnerProduct layer(context_.get(), 4, 4);
  std::vector<float> x(32, 1.0f), w(16, 1.0f), y(32);
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(layer.Forward(8, x.data(), w.data(), nullptr, y.data()).ok());
  }
  ASSERT_TRUE(layer.Forward(2, x.data(), w.data(), nullptr, y.data()).ok());
  EXPECT_EQ(y[0], 4.0f);
}

TEST_F(InnerProductTest, RefusesEmptyBatch) {
  InnerProduct layer(context_.get(), 4, 4);
  std::vector<float> x(4), w(16), y(4);
  EXPECT_EQ(layer.Forward(0, x.data(), w.data(), nullptr, y.data()).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
