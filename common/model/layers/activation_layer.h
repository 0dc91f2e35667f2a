#ifndef PSTRAIN_COMMON_MODEL_LAYERS_ACTIVATION_LAYER_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_ACTIVATION_LAYER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/dnnl/primitive_cache.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pstrain {

enum class ActivationKind {
  kRelu,
  kTanh,
  kSigmoid,
  kGelu,  // x * Phi(x), the exact (erf) form
};

absl::string_view ActivationName(ActivationKind kind);

// An element-wise activation on oneDNN's eltwise primitives. Works on any
// number of elements; primitives are built once per element count.
// Thread-compatible; borrows `context`, which must outlive it.
class ActivationLayer {
 public:
  ActivationLayer(ComputeContext* context, ActivationKind kind);

  ActivationLayer(const ActivationLayer&) = delete;
  ActivationLayer& operator=(const ActivationLayer&) = delete;

  // y = f(x) for `size` elements. `y` may equal `x`. InvalidArgument: size < 1.
  absl::Status Forward(int64_t size, const float* x, float* y);

  // dx = f'(x) * dy, from the forward input `x`. `dx` may equal `dy`.
  absl::Status Backward(int64_t size, const float* x, const float* dy, float* dx);

  ActivationKind kind() const { return kind_; }

 private:
  struct Primitives {
    dnnl::eltwise_forward forward;
    dnnl::eltwise_backward backward;
    dnnl::memory src, dst, diff_dst, diff_src;
  };

  absl::StatusOr<Primitives*> GetPrimitives(int64_t size);

  ComputeContext* const context_;
  const ActivationKind kind_;
  PrimitiveCache<Primitives> cache_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_ACTIVATION_LAYER_H_
