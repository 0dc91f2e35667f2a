#ifndef PSTRAIN_COMMON_MODEL_LAYERS_SIGMOID_CROSS_ENTROPY_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_SIGMOID_CROSS_ENTROPY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pstrain {

// Binary cross-entropy on one logit per example, averaged over the batch:
//   loss = max(x, 0) - x * z + log(1 + exp(-|x|))
// which is exact and never overflows for any logit x and label z in [0, 1].
// Each example's loss and gradient depend on its own logit only. Stateless and
// thread-safe.
class SigmoidCrossEntropy {
 public:
  // Writes sigmoid(logits) to probabilities [batch] and, unless null, each
  // example's loss. Returns the mean loss.
  // InvalidArgument: batch < 1 or a label outside [0, 1] (naming the example).
  static absl::StatusOr<double> Forward(int64_t batch, const float* logits, const float* labels,
                                        float* probabilities, float* losses);

  // d(mean loss)/d(logits) = (probabilities - labels) / batch.
  static absl::Status Backward(int64_t batch, const float* probabilities, const float* labels,
                               float* dlogits);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_SIGMOID_CROSS_ENTROPY_H_
