#ifndef PSTRAIN_COMMON_MODEL_INTERNAL_LOSS_HEAD_H_
#define PSTRAIN_COMMON_MODEL_INTERNAL_LOSS_HEAD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/layers/softmax_cross_entropy.h"
#include "common/model/model.h"
#include "common/model/onnx_graph.h"

namespace pstrain {
namespace model_internal {

// The last step of every built-in model: turns logits (or a regression
// output) into predictions and a mean loss, and back into the gradient of
// that loss. Softmax cross-entropy for classes, sigmoid cross-entropy for a
// binary label, mean squared error for regression. Thread-compatible.
class LossHead {
 public:
  // `num_classes` matters for kClassProbabilities only.
  LossHead(ComputeContext* context, PredictionKind kind, int64_t num_classes);

  PredictionKind kind() const { return kind_; }
  // Logits per example: num_classes, or 1.
  int64_t width() const { return width_; }

  // Fills output->loss, example_losses and predictions from `logits`
  // [batch, width()]. InvalidArgument: labels that do not fit the head.
  absl::Status Forward(int64_t batch, const float* logits, const std::vector<float>& labels,
                       ModelOutput* output);

  // Names the graph's outputs for `logits` [batch, width()]: "predictions"
  // (as Forward's) and, for classes and binary labels, "logits".
  void DescribeOnnx(OnnxGraph& graph, const std::string& logits) const;

  // d(mean loss)/d(logits) from the predictions of the last Forward.
  absl::Status Backward(int64_t batch, const ModelOutput& output, const std::vector<float>& labels,
                        float* dlogits);

 private:
  const PredictionKind kind_;
  const int64_t width_;
  std::unique_ptr<SoftmaxCrossEntropy> softmax_;
};

}  // namespace model_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_INTERNAL_LOSS_HEAD_H_
