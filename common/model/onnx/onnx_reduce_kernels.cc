#include "common/model/onnx/onnx_reduce_kernels.h"

#include <algorithm>
#include <vector>

#include "absl/status/statusor.h"
#include "common/model/onnx/onnx_kernel_support.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace onnx_internal {
namespace {

// Which dims of `x` the node reduces, by the rules above.
absl::StatusOr<std::vector<bool>> ReducedAxes(const OnnxNode& node, const Values& values) {
  const OnnxValue& x = values[node.inputs[0]];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> axes;
  if (HasInput(node, 1)) {
    const OnnxValue& given = values[node.inputs[1]];
    if (!given.is_int64 || !given.known) {
      return Refuse(node, "its axes are not known int64 values");
    }
    axes = given.ints;
  } else if (auto attribute = node.ints_attributes.find("axes");
             attribute != node.ints_attributes.end()) {
    axes = attribute->second;
  }
  const bool noop = node.IntAttribute("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(rank, axes.empty() && !noop);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return Refuse(node, absl::StrCat("axis ", axis, " is out of range for ", DimsText(x.dims)));
    }
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  return reduced;
}

// The strides, over the input's dims, of each element's place in the
// output: 0 along a reduced dim.
std::vector<int64_t> OutputStrides(const OnnxValue& x, const std::vector<bool>& reduced) {
  std::vector<int64_t> kept;
  for (size_t d = 0; d < x.dims.size(); ++d) kept.push_back(reduced[d] ? 1 : x.dims[d]);
  std::vector<int64_t> strides = StridesOf(kept);
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (reduced[d]) strides[d] = 0;
  }
  return strides;
}

// 1 for a sum; 1 / (elements reduced into each output) for a mean.
float Scale(const OnnxNode& node, const OnnxValue& x, const OnnxValue& y) {
  if (node.op != "ReduceMean" || y.num_elements() == 0) return 1.0f;
  return static_cast<float>(y.num_elements()) / static_cast<float>(x.num_elements());
}

absl::Status PlanReduce(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  if (x.is_int64) return Refuse(node, "reduces int64 values; pstrain reduces float values only");
  ASSIGN_OR_RETURN(const std::vector<bool> reduced, ReducedAxes(node, values));
  const bool keep = node.IntAttribute("keepdims", 1) != 0;
  std::vector<int64_t> dims;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (!reduced[d]) {
      dims.push_back(x.dims[d]);
    } else if (keep) {
      dims.push_back(1);
    }
  }
  Resize(Out(node, values), dims, /*is_int64=*/false);
  return absl::OkStatus();
}

void ForwardReduce(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& x = In(node, values, 0);
  OnnxValue& y = Out(node, values);
  const std::vector<bool> reduced = *ReducedAxes(node, values);  // checked by the plan
  std::fill(y.floats.begin(), y.floats.end(), 0.0f);
  const float* in = x.data();
  float* out = y.floats.data();
  ForEachStrided(x.dims, OutputStrides(x, reduced), 0,
                 [&](int64_t i, int64_t at) { out[at] += in[i]; });
  const float scale = Scale(node, x, y);
  if (scale != 1.0f) {
    for (float& v : y.floats) v *= scale;
  }
}

void BackwardReduce(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  if (!x.takes_grad()) return;
  const OnnxValue& y = Out(node, values);
  const std::vector<bool> reduced = *ReducedAxes(node, values);
  const float scale = Scale(node, x, y);
  float* dx = x.grad_data();
  const float* dy = y.grad.data();
  ForEachStrided(x.dims, OutputStrides(x, reduced), 0,
                 [&](int64_t i, int64_t at) { dx[i] += scale * dy[at]; });
}

}  // namespace

void AddReduceKernels(std::map<std::string, OnnxKernel>& kernels) {
  kernels["ReduceSum"] = {PlanReduce, ForwardReduce, BackwardReduce, 1, 2};
  kernels["ReduceMean"] = {PlanReduce, ForwardReduce, BackwardReduce, 1, 2};
}

}  // namespace onnx_internal
}  // namespace pstrain
