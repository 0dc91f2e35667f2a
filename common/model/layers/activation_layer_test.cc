#include "common/model/layers/activation_layer.h"

#include <cmath>
#include <memory>
#include <vector>

#include "common/model/layers/gradient_check.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::Dot;
using testing_util::GradientsNear;
using testing_util::NumericalGradient;
using testing_util::RandomValuesAwayFromZero;

double Reference(ActivationKind kind, double x) {
  switch (kind) {
    case ActivationKind::kRelu:
      return x > 0 ? x : 0;
    case ActivationKind::kTanh:
      return std::tanh(x);
    case ActivationKind::kSigmoid:
      return 1 / (1 + std::exp(-x));
    case ActivationKind::kGelu:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  }
  return 0;
}

class ActivationTest : public ::testing::TestWithParam<ActivationKind> {
 protected:
  void SetUp() override {
    auto context = ComputeContext::Create();
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = std::move(context).value();
  }
  std::unique_ptr<ComputeContext> context_;
};

TEST_P(ActivationTest, ForwardMatchesReference) {
  ActivationLayer layer(context_.get(), GetParam());
  const std::vector<float> x = {-3, -1, -0.25f, 0.5f, 1, 2.5f};
  std::vector<float> y(x.size());
  ASSERT_TRUE(layer.Forward(x.size(), x.data(), y.data()).ok());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(y[i], Reference(GetParam(), x[i]), 1e-5) << "x = " << x[i];
  }
}

TEST_P(ActivationTest, BackwardMatchesNumericalGradient) {
  ActivationLayer layer(context_.get(), GetParam());
  const int64_t size = 40;
  // Away from 0 so the finite difference never straddles ReLU's kink.
  std::vector<float> x = RandomValuesAwayFromZero(size, 0.05f, 3, 7);
  const std::vector<float> r = RandomValuesAwayFromZero(size, 0.1f, 1, 8);
  std::vector<float> y(size), dx(size);
  auto loss = [&] {
    EXPECT_TRUE(layer.Forward(size, x.data(), y.data()).ok());
    return Dot(y.data(), r.data(), size);
  };
  ASSERT_TRUE(layer.Backward(size, x.data(), r.data(), dx.data()).ok());
  EXPECT_TRUE(GradientsNear(dx.data(), NumericalGradient(loss, x.data(), size)));
}

INSTANTIATE_TEST_SUITE_P(AllKinds, ActivationTest,
                         ::testing::Values(ActivationKind::kRelu, ActivationKind::kTanh,
                                           ActivationKind::kSigmoid, ActivationKind::kGelu),
                         [](const auto& info) { return std::string(ActivationName(info.param)); });

}  // namespace
}  // namespace pstrain
