#ifndef PSTRAIN_COMMON_MODEL_LAYERS_POOLING_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_POOLING_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/dnnl/primitive_cache.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pstrain {

enum class PoolingKind { kMax, kAverage };

// 2-D max or average pooling on oneDNN, channels last, without padding:
//   x [batch, height, width, channels] -> y [batch, out_h, out_w, channels]
// with out = (in - window) / stride + 1. Max pooling keeps the positions of
// the maxima of the last Forward (per shape) for Backward.
// Thread-compatible; borrows `context`, which must outlive it.
class Pooling {
 public:
  Pooling(ComputeContext* context, PoolingKind kind, int64_t window, int64_t stride);

  Pooling(const Pooling&) = delete;
  Pooling& operator=(const Pooling&) = delete;

  int64_t OutputSize(int64_t size) const { return (size - window_) / stride_ + 1; }

  // InvalidArgument: non-positive sizes, or an image smaller than the window.
  absl::Status Forward(int64_t batch, int64_t height, int64_t width, int64_t channels,
                       const float* x, float* y);

  // dx from dy, using the last Forward of the same shape.
  absl::Status Backward(int64_t batch, int64_t height, int64_t width, int64_t channels,
                        const float* dy, float* dx);

  // oneDNN's names for the implementations it picked, forward and backward,
  // for benchmarks. Empty on error.
  std::string Implementation(int64_t batch, int64_t height, int64_t width, int64_t channels);

 private:
  struct Primitives {
    dnnl::pooling_forward forward;
    dnnl::pooling_backward backward;
    dnnl::memory src, dst, diff_src, diff_dst;
    dnnl::memory workspace;  // owned by oneDNN; max pooling only
    std::string implementation;
  };

  absl::StatusOr<Primitives*> GetPrimitives(int64_t batch, int64_t height, int64_t width,
                                            int64_t channels);

  ComputeContext* const context_;
  const PoolingKind kind_;
  const int64_t window_;
  const int64_t stride_;
  PrimitiveCache<Primitives> cache_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_POOLING_H_
