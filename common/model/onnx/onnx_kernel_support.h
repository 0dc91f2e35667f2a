#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_KERNEL_SUPPORT_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_KERNEL_SUPPORT_H_

// What every ONNX kernel file (onnx_kernels.cc, onnx_shape_kernels.cc,
// onnx_spatial_kernels.cc) uses to read a node's values, size its outputs,
// walk strided blocks and refuse what it cannot run. Internal to the
// import.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/onnx/onnx_values.h"
#include "dnnl.h"

namespace pstrain {
namespace onnx_internal {

using Values = std::vector<OnnxValue>;

inline absl::Status Refuse(const OnnxNode& node, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("node ", node.name, " (", node.op, "): ", why));
}

inline std::string DimsText(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

inline OnnxValue& In(const OnnxNode& node, Values& values, int i) { return values[node.inputs[i]]; }
inline OnnxValue& Out(const OnnxNode& node, Values& values, int i = 0) {
  return values[node.outputs[i]];
}
inline bool HasInput(const OnnxNode& node, int i) {
  return static_cast<int>(node.inputs.size()) > i && node.inputs[i] >= 0;
}

// Sizes `out` as `dims` and of the element type given, zero-filled.
inline void Resize(OnnxValue& out, std::vector<int64_t> dims, bool is_int64) {
  out.dims = std::move(dims);
  out.is_int64 = is_int64;
  out.oversized = OnnxElements(out.dims) < 0;
  if (out.oversized) return;
  if (is_int64) {
    out.ints.assign(out.num_elements(), 0);
  } else {
    out.floats.assign(out.num_elements(), 0.0f);
  }
}

// C = alpha op(A) op(B) + beta C, row-major, through oneDNN's sgemm.
inline void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, const float* b, float beta, float* c) {
  if (m == 0 || n == 0) return;
  dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, trans_a ? m : k, b,
             trans_b ? k : n, beta, c, n);
}

// Calls fn(i, at) for each element i, in row-major order, of a block of
// `dims` whose element at coordinates c lies at base + sum(c * strides):
// how broadcasts, transposes and pads walk one value inside another.
template <typename Fn>
inline void ForEachStrided(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                           int64_t base, Fn fn) {
  const size_t rank = dims.size();
  const int64_t total = std::max<int64_t>(OnnxElements(dims), 0);
  std::vector<int64_t> coordinate(rank, 0);
  int64_t at = base;
  for (int64_t i = 0; i < total; ++i) {
    fn(i, at);
    for (size_t axis = rank; axis-- > 0;) {
      at += strides[axis];
      if (++coordinate[axis] < dims[axis]) break;
      at -= strides[axis] * dims[axis];
      coordinate[axis] = 0;
    }
  }
}

// The row-major strides of `dims`.
inline std::vector<int64_t> StridesOf(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// Identity, Flatten, Reshape, Unsqueeze: the same elements, other dims.
inline void ForwardCopy(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& x = In(node, values, 0);
  OnnxValue& y = Out(node, values);
  if (x.is_int64) {
    y.ints = x.ints;
  } else {
    y.floats.assign(x.data(), x.data() + x.num_elements());
  }
}

inline void BackwardCopy(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  if (!x.takes_grad()) return;
  const OnnxValue& y = Out(node, values);
  float* dx = x.grad_data();
  for (size_t i = 0; i < y.grad.size(); ++i) dx[i] += y.grad[i];
}

}  // namespace onnx_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_KERNEL_SUPPORT_H_
