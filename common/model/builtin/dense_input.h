#ifndef PSTRAIN_COMMON_MODEL_BUILTIN_DENSE_INPUT_H_
#define PSTRAIN_COMMON_MODEL_BUILTIN_DENSE_INPUT_H_

// Checks shared by the built-in models: a batch's dense features and the
// activation named in a spec.

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/data/example_batch.h"
#include "common/model/layers/activation_layer.h"
#include "protos/job.pb.h"

namespace pstrain {

// The batch's dense features [batch.size, dim]. InvalidArgument: an empty
// batch, or features of another width (naming both).
absl::StatusOr<const float*> DenseInput(const ExampleBatch& batch, int64_t dim);

// ACTIVATION_UNSPECIFIED means ReLU. InvalidArgument: an unknown value.
absl::StatusOr<ActivationKind> ActivationFromSpec(Activation activation);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_BUILTIN_DENSE_INPUT_H_
