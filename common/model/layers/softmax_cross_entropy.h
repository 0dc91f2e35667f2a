#ifndef PSTRAIN_COMMON_MODEL_LAYERS_SOFTMAX_CROSS_ENTROPY_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_SOFTMAX_CROSS_ENTROPY_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/dnnl/primitive_cache.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pstrain {

// Softmax over classes followed by cross-entropy against integer labels,
// averaged over the batch. Each example's loss and gradient depend on its own
// logits only, so splitting a batch (across workers, say) and averaging the
// parts gives the same result. The log-softmax runs on oneDNN.
// Thread-compatible; borrows `context`, which must outlive it.
class SoftmaxCrossEntropy {
 public:
  SoftmaxCrossEntropy(ComputeContext* context, int64_t num_classes);

  SoftmaxCrossEntropy(const SoftmaxCrossEntropy&) = delete;
  SoftmaxCrossEntropy& operator=(const SoftmaxCrossEntropy&) = delete;

  // logits [batch, classes]; labels [batch] hold class ids as floats.
  // Writes probabilities [batch, classes] and, unless null, each example's
  // loss [batch]. Returns the mean loss.
  // InvalidArgument: batch < 1, or a label that is not an integer in
  // [0, num_classes) (the message names the example).
  absl::StatusOr<double> Forward(int64_t batch, const float* logits, const float* labels,
                                 float* probabilities, float* losses);

  // d(mean loss)/d(logits) = (probabilities - onehot(labels)) / batch.
  absl::Status Backward(int64_t batch, const float* probabilities, const float* labels,
                        float* dlogits) const;

  int64_t num_classes() const { return num_classes_; }

 private:
  struct Primitives {
    dnnl::logsoftmax_forward forward;
    dnnl::memory src, dst;
  };

  absl::Status CheckLabels(int64_t batch, const float* labels) const;

  ComputeContext* const context_;
  const int64_t num_classes_;
  PrimitiveCache<Primitives> cache_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_SOFTMAX_CROSS_ENTROPY_H_
