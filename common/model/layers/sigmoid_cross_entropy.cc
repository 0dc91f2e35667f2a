#include "common/model/layers/sigmoid_cross_entropy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

absl::Status CheckLabels(int64_t batch, const float* labels) {
  if (batch < 1) return absl::InvalidArgumentError(absl::StrCat("batch must be >= 1, got ", batch));
  for (int64_t i = 0; i < batch; ++i) {
    if (!(labels[i] >= 0 && labels[i] <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("example ", i, " has label ", labels[i], ", not in [0, 1]"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<double> SigmoidCrossEntropy::Forward(int64_t batch, const float* logits,
                                                    const float* labels, float* probabilities,
                                                    float* losses) {
  absl::Status status = CheckLabels(batch, labels);
  if (!status.ok()) return status;
  double total = 0;
  for (int64_t i = 0; i < batch; ++i) {
    const double x = logits[i];
    const double e = std::exp(-std::abs(x));
    const double loss = std::max(x, 0.0) - x * labels[i] + std::log1p(e);
    // sigmoid(x) without overflow: 1/(1+e^-x) for x >= 0, e^x/(1+e^x) below.
    probabilities[i] = static_cast<float>(x >= 0 ? 1 / (1 + e) : e / (1 + e));
    if (losses != nullptr) losses[i] = static_cast<float>(loss);
    total += loss;
  }
  return total / batch;
}

absl::Status SigmoidCrossEntropy::Backward(int64_t batch, const float* probabilities,
                                           const float* labels, float* dlogits) {
  absl::Status status = CheckLabels(batch, labels);
  if (!status.ok()) return status;
  const float scale = 1.0f / static_cast<float>(batch);
  for (int64_t i = 0; i < batch; ++i) dlogits[i] = (probabilities[i] - labels[i]) * scale;
  return absl::OkStatus();
}

}  // namespace pstrain
