#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_KERNEL_SUPPORT_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_KERNEL_SUPPORT_H_

// What every ONNX kernel file (onnx_kernels.cc, onnx_spatial_kernels.cc)
// uses to read a node's values, size its outputs and refuse what it cannot
// run. Internal to the import.

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

}  // namespace onnx_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_KERNEL_SUPPORT_H_
