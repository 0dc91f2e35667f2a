#ifndef PSTRAIN_COMMON_MODEL_LAYERS_INNER_PRODUCT_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_INNER_PRODUCT_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/dnnl/primitive_cache.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pstrain {

// A fully connected layer on oneDNN's inner product:
//   y[batch, out] = x[batch, in] * w[in, out] + b[out]
// Weights are row-major [in, out]. Primitives are built once per batch size.
// Thread-compatible; borrows `context`, which must outlive it.
class InnerProduct {
 public:
  InnerProduct(ComputeContext* context, int64_t input_dim, int64_t output_dim);

  InnerProduct(const InnerProduct&) = delete;
  InnerProduct& operator=(const InnerProduct&) = delete;

  // InvalidArgument: batch < 1. `b` may be null (no bias).
  absl::Status Forward(int64_t batch, const float* x, const float* w, const float* b, float* y);

  // Given dy = dL/dy, writes dx = dL/dx (skipped when dx is null, e.g. for a
  // first layer), dw = dL/dw and db = dL/db (skipped when null).
  absl::Status Backward(int64_t batch, const float* x, const float* w, const float* dy, float* dx,
                        float* dw, float* db);

  int64_t input_dim() const { return input_dim_; }
  int64_t output_dim() const { return output_dim_; }

  // Floating-point operations of one forward pass (a backward pass is twice).
  double ForwardFlops(int64_t batch) const {
    return 2.0 * static_cast<double>(batch) * input_dim_ * output_dim_;
  }

 private:
  struct Primitives {
    dnnl::inner_product_forward forward;
    dnnl::inner_product_backward_data backward_data;
    dnnl::inner_product_backward_weights backward_weights;
    dnnl::inner_product_backward_weights backward_weights_no_bias;
    dnnl::memory src, weights, bias, dst;
    dnnl::memory diff_src, diff_weights, diff_bias, diff_dst;
  };

  absl::StatusOr<Primitives*> GetPrimitives(int64_t batch);

  ComputeContext* const context_;
  const int64_t input_dim_;
  const int64_t output_dim_;
  PrimitiveCache<Primitives> cache_;
  // A zero bias for Forward without one (oneDNN's bias-less inner product
  // would need a second primitive); grown once.
  std::vector<float> zero_bias_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_INNER_PRODUCT_H_
