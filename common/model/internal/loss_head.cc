#include "common/model/internal/loss_head.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/model/layers/sigmoid_cross_entropy.h"

namespace pstrain {
namespace model_internal {

LossHead::LossHead(ComputeContext* context, PredictionKind kind, int64_t num_classes)
    : kind_(kind), width_(kind == PredictionKind::kClassProbabilities ? num_classes : 1) {
  if (kind == PredictionKind::kClassProbabilities) {
    softmax_ = std::make_unique<SoftmaxCrossEntropy>(context, num_classes);
  }
}

absl::Status LossHead::Forward(int64_t batch, const float* logits, const std::vector<float>& labels,
                               ModelOutput* output) {
  if (static_cast<int64_t>(labels.size()) != batch) {
    return absl::InvalidArgumentError(
        absl::StrCat(labels.size(), " labels for a batch of ", batch));
  }
  output->example_losses.resize(batch);
  output->predictions.resize(batch * width_);
  absl::StatusOr<double> loss;
  switch (kind_) {
    case PredictionKind::kClassProbabilities:
      loss = softmax_->Forward(batch, logits, labels.data(), output->predictions.data(),
                               output->example_losses.data());
      break;
    case PredictionKind::kBinaryProbability:
      loss = SigmoidCrossEntropy::Forward(batch, logits, labels.data(), output->predictions.data(),
                                          output->example_losses.data());
      break;
    case PredictionKind::kRegression: {
      double total = 0;
      for (int64_t i = 0; i < batch; ++i) {
        const double error = static_cast<double>(logits[i]) - labels[i];
        output->predictions[i] = logits[i];
        output->example_losses[i] = static_cast<float>(error * error);
        total += error * error;
      }
      loss = total / batch;
      break;
    }
  }
  if (!loss.ok()) return loss.status();
  output->loss = *loss;
  return absl::OkStatus();
}

void LossHead::DescribeOnnx(OnnxGraph& graph, const std::string& logits) const {
  switch (kind_) {
    case PredictionKind::kClassProbabilities:
      graph.Output("logits", logits, width_, "the class scores before the softmax");
      graph.Output("predictions", graph.Node("Softmax", {logits}), width_,
                   "class probabilities: row i, column k is P(example i has class k)");
      return;
    case PredictionKind::kBinaryProbability:
      graph.Output("logits", logits, 1, "log-odds of label 1");
      graph.Output("predictions", graph.Node("Sigmoid", {logits}), 1, "P(label = 1)");
      return;
    case PredictionKind::kRegression:
      graph.Output("predictions", logits, 1, "the predicted value");
      return;
  }
}

absl::Status LossHead::Backward(int64_t batch, const ModelOutput& output,
                                const std::vector<float>& labels, float* dlogits) {
  switch (kind_) {
    case PredictionKind::kClassProbabilities:
      return softmax_->Backward(batch, output.predictions.data(), labels.data(), dlogits);
    case PredictionKind::kBinaryProbability:
      return SigmoidCrossEntropy::Backward(batch, output.predictions.data(), labels.data(),
                                           dlogits);
    case PredictionKind::kRegression: {
      const float scale = 2.0f / static_cast<float>(batch);
      for (int64_t i = 0; i < batch; ++i) {
        dlogits[i] = (output.predictions[i] - labels[i]) * scale;
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown prediction kind");
}

}  // namespace model_internal
}  // namespace pstrain
