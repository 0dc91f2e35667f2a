#include "common/model/builtin/dense_input.h"

#include "absl/strings/str_cat.h"

namespace pstrain {

absl::StatusOr<const float*> DenseInput(const ExampleBatch& batch, int64_t dim) {
  if (batch.size < 1) return absl::InvalidArgumentError("empty batch");
  if (batch.dense.dtype() != DATA_TYPE_FLOAT32 || batch.dense.shape() != Shape({batch.size, dim})) {
    return absl::InvalidArgumentError(absl::StrCat("the model needs dense features [", batch.size,
                                                   ", ", dim, "], the batch has ",
                                                   batch.dense.DebugString()));
  }
  return batch.dense.data<float>();
}

absl::StatusOr<ActivationKind> ActivationFromSpec(Activation activation) {
  switch (activation) {
    case ACTIVATION_UNSPECIFIED:
    case ACTIVATION_RELU:
      return ActivationKind::kRelu;
    case ACTIVATION_TANH:
      return ActivationKind::kTanh;
    case ACTIVATION_SIGMOID:
      return ActivationKind::kSigmoid;
    case ACTIVATION_GELU:
      return ActivationKind::kGelu;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown activation ", static_cast<int>(activation)));
  }
}

}  // namespace pstrain
