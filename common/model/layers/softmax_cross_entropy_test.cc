#include "common/model/layers/softmax_cross_entropy.h"

#include <cmath>
#include <memory>
#include <vector>

#include "common/model/layers/gradient_check.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::GradientsNear;
using testing_util::NumericalGradient;
using testing_util::RandomValues;

class SoftmaxCrossEntropyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto context = ComputeContext::Create();
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = std::move(context).value();
  }
  std::unique_ptr<ComputeContext> context_;
};

TEST_F(SoftmaxCrossEntropyTest, ForwardMatchesHandComputedLoss) {
  SoftmaxCrossEntropy layer(context_.get(), 3);
  const std::vector<float> logits = {1, 2, 3, 0, 0, 0};
  const std::vector<float> labels = {2, 0};
  std::vector<float> probabilities(6), losses(2);
  auto mean = layer.Forward(2, logits.data(), labels.data(), probabilities.data(), losses.data());
  ASSERT_TRUE(mean.ok()) << mean.status();
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(probabilities[2], std::exp(3.0) / z, 1e-5);
  EXPECT_NEAR(probabilities[3], 1.0 / 3, 1e-5);
  EXPECT_NEAR(losses[0], std::log(z) - 3, 1e-5);
  EXPECT_NEAR(losses[1], std::log(3.0), 1e-5);
  EXPECT_NEAR(*mean, (losses[0] + losses[1]) / 2, 1e-6);
}

TEST_F(SoftmaxCrossEntropyTest, StableForHugeLogits) {
  SoftmaxCrossEntropy layer(context_.get(), 2);
  const std::vector<float> logits = {1000, -1000};
  const std::vector<float> labels = {1};
  std::vector<float> probabilities(2);
  auto mean = layer.Forward(1, logits.data(), labels.data(), probabilities.data(), nullptr);
  ASSERT_TRUE(mean.ok());
  EXPECT_NEAR(*mean, 2000, 1e-2);
  EXPECT_TRUE(std::isfinite(*mean));
}

TEST_F(SoftmaxCrossEntropyTest, BackwardMatchesNumericalGradient) {
  const int64_t batch = 5, classes = 4;
  SoftmaxCrossEntropy layer(context_.get(), classes);
  std::vector<float> logits = RandomValues(batch * classes, -2, 2, 11);
  const std::vector<float> labels = {0, 3, 1, 1, 2};
  std::vector<float> probabilities(batch * classes), dlogits(batch * classes);
  auto loss = [&] {
    return *layer.Forward(batch, logits.data(), labels.data(), probabilities.data(), nullptr);
  };
  loss();
  ASSERT_TRUE(layer.Backward(batch, probabilities.data(), labels.data(), dlogits.data()).ok());
  EXPECT_TRUE(GradientsNear(
      dlogits.data(), NumericalGradient(loss, logits.data(), logits.size(), 1e-3), 2e-4, 2e-2));
}

TEST_F(SoftmaxCrossEntropyTest, RefusesBadLabels) {
  SoftmaxCrossEntropy layer(context_.get(), 3);
  const std::vector<float> logits(6, 0.0f);
  std::vector<float> probabilities(6);
  for (float bad : {3.0f, -1.0f, 0.5f, NAN}) {
    const std::vector<float> labels = {0, bad};
    auto result = layer.Forward(2, logits.data(), labels.data(), probabilities.data(), nullptr);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(result.status().message().find("example 1"), std::string::npos);
  }
}

}  // namespace
}  // namespace pstrain
