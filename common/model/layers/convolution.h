#ifndef PSTRAIN_COMMON_MODEL_LAYERS_CONVOLUTION_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_CONVOLUTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/dnnl/primitive_cache.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace pstrain {

struct ConvolutionConfig {
  int64_t in_channels = 1;
  int64_t out_channels = 1;
  int64_t kernel = 3;  // square kernel side; >= 1
  int64_t stride = 1;  // >= 1
  // Zero padding on each side. The default, kernel / 2 with stride 1,
  // keeps the image size for an odd kernel ("same").
  int64_t padding = -1;  // -1: kernel / 2
};

// A 2-D convolution on oneDNN, channels last:
//   x [batch, height, width, in], w [kernel, kernel, in, out] (HWIO),
//   b [out], y [batch, out_height, out_width, out].
// oneDNN picks the memory layouts its fastest implementation wants (blocked
// channels for its direct AVX2 kernels) and the layer reorders to and from
// the plain layouts above around each call: a few memory passes buy a kernel
// that is much faster than im2col and GEMM on plain layouts.
// Primitives are built once per (batch, height, width).
// Thread-compatible; borrows `context`, which must outlive it.
class Convolution {
 public:
  Convolution(ComputeContext* context, const ConvolutionConfig& config);

  Convolution(const Convolution&) = delete;
  Convolution& operator=(const Convolution&) = delete;

  int64_t OutputHeight(int64_t height) const;
  int64_t OutputWidth(int64_t width) const { return OutputHeight(width); }

  // InvalidArgument: a non-positive size or an output that would be empty.
  absl::Status Forward(int64_t batch, int64_t height, int64_t width, const float* x, const float* w,
                       const float* b, float* y);

  // Given dy, writes dx (skipped when null), dw and db.
  absl::Status Backward(int64_t batch, int64_t height, int64_t width, const float* x,
                        const float* w, const float* dy, float* dx, float* dw, float* db);

  // Floating-point operations of one forward pass.
  double ForwardFlops(int64_t batch, int64_t height, int64_t width) const;

  // oneDNN's names for the implementations it picked (forward / backward
  // data / backward weights, e.g. "jit:avx2"), for benchmarks. Empty on
  // error.
  std::string Implementation(int64_t batch, int64_t height, int64_t width);

  const ConvolutionConfig& config() const { return config_; }

 private:
  // A plain user buffer and, when the primitive wants another layout, the
  // primitive's own buffer with the reorder between them.
  struct Staged {
    dnnl::memory user;
    dnnl::memory internal;  // == user when the layouts agree
    dnnl::reorder reorder;  // user -> internal for inputs, back for outputs
    bool reordered = false;
  };

  struct Primitives {
    dnnl::convolution_forward forward;
    dnnl::convolution_backward_data backward_data;
    dnnl::convolution_backward_weights backward_weights;
    Staged src, weights, dst;                                    // forward
    Staged bwd_data_weights, bwd_data_diff_dst, diff_src;        // backward data
    Staged bwd_weights_src, bwd_weights_diff_dst, diff_weights;  // backward weights
    dnnl::memory bias, diff_bias;
    std::string implementation;
  };

  absl::StatusOr<Primitives*> GetPrimitives(int64_t batch, int64_t height, int64_t width);

  ComputeContext* const context_;
  ConvolutionConfig config_;
  PrimitiveCache<Primitives> cache_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_CONVOLUTION_H_
