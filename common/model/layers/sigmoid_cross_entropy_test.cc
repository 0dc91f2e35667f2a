#include "common/model/layers/sigmoid_cross_entropy.h"

#include <cmath>
#include <vector>

#include "common/model/layers/gradient_check.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::GradientsNear;
using testing_util::NumericalGradient;

TEST(SigmoidCrossEntropyTest, ForwardMatchesDefinition) {
  const std::vector<float> logits = {0, 2, -3};
  const std::vector<float> labels = {1, 0, 0.25f};
  std::vector<float> probabilities(3), losses(3);
  auto mean = SigmoidCrossEntropy::Forward(3, logits.data(), labels.data(), probabilities.data(),
                                           losses.data());
  ASSERT_TRUE(mean.ok());
  for (int i = 0; i < 3; ++i) {
    const double p = 1 / (1 + std::exp(-static_cast<double>(logits[i])));
    EXPECT_NEAR(probabilities[i], p, 1e-6);
    EXPECT_NEAR(losses[i], -(labels[i] * std::log(p) + (1 - labels[i]) * std::log(1 - p)), 1e-5);
  }
  EXPECT_NEAR(*mean, (losses[0] + losses[1] + losses[2]) / 3, 1e-6);
}

TEST(SigmoidCrossEntropyTest, StableForHugeLogits) {
  const std::vector<float> logits = {200, -200};
  const std::vector<float> labels = {0, 0};
  std::vector<float> probabilities(2), losses(2);
  ASSERT_TRUE(SigmoidCrossEntropy::Forward(2, logits.data(), labels.data(), probabilities.data(),
                                           losses.data())
                  .ok());
  EXPECT_NEAR(losses[0], 200, 1e-3);
  EXPECT_NEAR(losses[1], 0, 1e-6);
  EXPECT_EQ(probabilities[0], 1.0f);
}

TEST(SigmoidCrossEntropyTest, BackwardMatchesNumericalGradient) {
  std::vector<float> logits = {-2, -0.5f, 0.1f, 1.5f, 3};
  const std::vector<float> labels = {0, 1, 1, 0, 0.5f};
  std::vector<float> probabilities(5), dlogits(5);
  auto loss = [&] {
    return *SigmoidCrossEntropy::Forward(5, logits.data(), labels.data(), probabilities.data(),
                                         nullptr);
  };
  loss();
  ASSERT_TRUE(
      SigmoidCrossEntropy::Backward(5, probabilities.data(), labels.data(), dlogits.data()).ok());
  EXPECT_TRUE(
      GradientsNear(dlogits.data(), NumericalGradient(loss, logits.data(), 5, 1e-3), 1e-4, 1e-2));
}

TEST(SigmoidCrossEntropyTest, RefusesLabelsOutsideUnitInterval) {
  const std::vector<float> logits = {0, 0};
  const std::vector<float> labels = {1, 2};
  std::vector<float> probabilities(2);
  EXPECT_EQ(
      SigmoidCrossEntropy::Forward(2, logits.data(), labels.data(), probabilities.data(), nullptr)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
