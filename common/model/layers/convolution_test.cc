#include "common/model/layers/convolution.h"

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

// Direct definition: NHWC input, HWIO weights, zero padding.
std::vector<float> Reference(const ConvolutionConfig& c, int64_t n, int64_t h, int64_t w,
                             const std::vector<float>& x, const std::vector<float>& k,
                             const std::vector<float>& b) {
  const int64_t pad = c.padding < 0 ? c.kernel / 2 : c.padding;
  const int64_t oh = (h + 2 * pad - c.kernel) / c.stride + 1;
  const int64_t ow = (w + 2 * pad - c.kernel) / c.stride + 1;
  std::vector<float> y(n * oh * ow * c.out_channels);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t s = 0; s < ow; ++s)
        for (int64_t o = 0; o < c.out_channels; ++o) {
          double sum = b[o];
          for (int64_t kr = 0; kr < c.kernel; ++kr)
            for (int64_t ks = 0; ks < c.kernel; ++ks) {
              const int64_t ir = r * c.stride + kr - pad, is = s * c.stride + ks - pad;
              if (ir < 0 || ir >= h || is < 0 || is >= w) continue;
              for (int64_t ci = 0; ci < c.in_channels; ++ci) {
                sum += x[((i * h + ir) * w + is) * c.in_channels + ci] *
                       k[((kr * c.kernel + ks) * c.in_channels + ci) * c.out_channels + o];
              }
            }
          y[((i * oh + r) * ow + s) * c.out_channels + o] = static_cast<float>(sum);
        }
  return y;
}

class ConvolutionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto context = ComputeContext::Create();
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = std::move(context).value();
  }
  std::unique_ptr<ComputeContext> context_;
};

TEST_F(ConvolutionTest, ForwardMatchesDirectDefinition) {
  for (int64_t stride : {1, 2}) {
    ConvolutionConfig config;
    config.in_channels = 2;
    config.out_channels = 3;
    config.kernel = 3;
    config.stride = stride;
    Convolution layer(context_.get(), config);
    const int64_t n = 2, h = 5, w = 6;
    const std::vector<float> x = RandomValues(n * h * w * 2, -1, 1, 1);
    const std::vector<float> k = RandomValues(3 * 3 * 2 * 3, -1, 1, 2);
    const std::vector<float> b = {0.5f, -0.25f, 1};
    std::vector<float> y(n * layer.OutputHeight(h) * layer.OutputWidth(w) * 3);
    ASSERT_TRUE(layer.Forward(n, h, w, x.data(), k.data(), b.data(), y.data()).ok());
    const std::vector<float> expected = Reference(config, n, h, w, x, k, b);
    ASSERT_EQ(y.size(), expected.size());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-4) << i;
  }
}

TEST_F(ConvolutionTest, BackwardMatchesNumericalGradient) {
  ConvolutionConfig config;
  config.in_channels = 2;
  config.out_channels = 3;
  config.kernel = 3;
  Convolution layer(context_.get(), config);
  const int64_t n = 2, h = 4, w = 5;
  std::vector<float> x = RandomValues(n * h * w * 2, -1, 1, 3);
  std::vector<float> k = RandomValues(3 * 3 * 2 * 3, -1, 1, 4);
  std::vector<float> b = RandomValues(3, -1, 1, 5);
  const int64_t out = n * h * w * 3;
  const std::vector<float> r = RandomValues(out, -1, 1, 6);
  std::vector<float> y(out);
  auto loss = [&] {
    EXPECT_TRUE(layer.Forward(n, h, w, x.data(), k.data(), b.data(), y.data()).ok());
    return Dot(y.data(), r.data(), out);
  };
  std::vector<float> dx(x.size()), dk(k.size()), db(b.size());
  ASSERT_TRUE(
      layer.Backward(n, h, w, x.data(), k.data(), r.data(), dx.data(), dk.data(), db.data()).ok());
  EXPECT_TRUE(GradientsNear(dx.data(), NumericalGradient(loss, x.data(), x.size())));
  EXPECT_TRUE(GradientsNear(dk.data(), NumericalGradient(loss, k.data(), k.size())));
  EXPECT_TRUE(GradientsNear(db.data(), NumericalGradient(loss, b.data(), b.size())));
}

TEST_F(ConvolutionTest, RefusesImagesSmallerThanTheKernel) {
  ConvolutionConfig config;
  config.kernel = 5;
  config.padding = 0;
  Convolution layer(context_.get(), config);
  std::vector<float> x(9), k(25), b(1), y(1);
  EXPECT_EQ(layer.Forward(1, 3, 3, x.data(), k.data(), b.data(), y.data()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(layer.Implementation(1, 8, 8).empty());
}

}  // namespace
}  // namespace pstrain
