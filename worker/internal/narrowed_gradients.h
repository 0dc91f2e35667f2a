#ifndef PSTRAIN_WORKER_INTERNAL_NARROWED_GRADIENTS_H_
#define PSTRAIN_WORKER_INTERNAL_NARROWED_GRADIENTS_H_

// A worker's dense gradients narrowed to bfloat16 for the wire
// (TrainingSpec.wire.gradients), with error feedback: per variable, what
// rounding took off one push is kept and added to the next, so that over
// the steps no gradient mass is lost. The residuals live as long as the
// worker's client of the shards: a restarted worker starts without them.

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/model/parameters.h"
#include "common/tensor/tensor.h"

namespace pstrain {
namespace worker {
namespace internal {

// Not thread-safe: one push at a time, as ParameterServerClient pushes.
class NarrowedGradients {
 public:
  // Every dense gradient of `gradients` plus its variable's residual,
  // narrowed to bfloat16 tensors of the same shapes; valid until the next
  // call. The residuals are updated. InvalidArgument: a dense gradient is
  // not float32, or its shape changed since the last push (the residual
  // would not fit).
  absl::StatusOr<const absl::flat_hash_map<std::string, Tensor>*> Narrow(
      const Gradients& gradients);

  // What rounding left of variable `name`'s gradients; empty before its
  // first push.
  absl::Span<const float> residual(const std::string& name) const;

 private:
  absl::flat_hash_map<std::string, Tensor> narrowed_;
  absl::flat_hash_map<std::string, std::vector<float>> residuals_;
};

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_NARROWED_GRADIENTS_H_
