#include "worker/internal/narrowed_gradients.h"

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "common/tensor/bfloat16.h"

namespace pstrain {
namespace worker {
namespace internal {

absl::StatusOr<const absl::flat_hash_map<std::string, Tensor>*> NarrowedGradients::Narrow(
    const Gradients& gradients) {
  for (const auto& [name, gradient] : gradients.dense) {
    if (gradient.dtype() != DATA_TYPE_FLOAT32) {
      return absl::InvalidArgumentError(
          absl::StrCat("the gradient of \"", name, "\" is ", gradient.DebugString(),
                       "; only float32 gradients are narrowed to bfloat16"));
    }
    const size_t n = gradient.num_elements();
    std::vector<float>& residual = residuals_[name];
    if (residual.empty()) residual.assign(n, 0.0f);
    if (residual.size() != n) {
      return absl::InvalidArgumentError(absl::StrCat("the gradient of \"", name, "\" has ", n,
                                                     " elements; the last one had ",
                                                     residual.size()));
    }
    Tensor& narrowed = narrowed_[name];
    if (narrowed.dtype() != DATA_TYPE_BFLOAT16 || narrowed.shape() != gradient.shape()) {
      ASSIGN_OR_RETURN(narrowed, Tensor::CreateUninitialized(DATA_TYPE_BFLOAT16, gradient.shape()));
    }
    NarrowWithErrorFeedback(absl::MakeConstSpan(gradient.data<float>(), n),
                            absl::MakeSpan(residual),
                            absl::MakeSpan(static_cast<uint16_t*>(narrowed.raw_data()), n));
  }
  // A variable without a gradient this push (not trainable) sends none.
  for (auto it = narrowed_.begin(); it != narrowed_.end();) {
    if (!gradients.dense.contains(it->first)) {
      narrowed_.erase(it++);
    } else {
      ++it;
    }
  }
  return &narrowed_;
}

absl::Span<const float> NarrowedGradients::residual(const std::string& name) const {
  auto it = residuals_.find(name);
  if (it == residuals_.end()) return {};
  return it->second;
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
