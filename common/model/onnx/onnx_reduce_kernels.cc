#include "common/model/onnx/onnx_reduce_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/model/onnx/onnx_kernel_support.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace onnx_internal {
namespace {

enum class Reduction { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

Reduction ReductionOf(const std::string& op) {
  if (op == "ReduceMean") return Reduction::kMean;
  if (op == "ReduceMax") return Reduction::kMax;
  if (op == "ReduceMin") return Reduction::kMin;
  if (op == "ReduceProd") return Reduction::kProd;
  if (op == "ReduceL1") return Reduction::kL1;
  if (op == "ReduceL2") return Reduction::kL2;
  if (op == "ReduceLogSum") return Reduction::kLogSum;
  if (op == "ReduceLogSumExp") return Reduction::kLogSumExp;
  if (op == "ReduceSumSquare") return Reduction::kSumSquare;
  return Reduction::kSum;
}

// The dims the node reduces, ascending, from its axes input (opset 18's
// form, ReduceSum's from 13) or attribute (up to 17); empty with
// noop_with_empty_axes: none (the node passes its input on); empty
// otherwise: all of them.
absl::StatusOr<std::vector<int64_t>> ReducedAxes(const OnnxNode& node, const Values& values) {
  const OnnxValue& x = values[node.inputs[0]];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> axes;
  if (HasInput(node, 1)) {
    const OnnxValue& given = values[node.inputs[1]];
    if (!given.is_int64 || !given.known) {
      return Refuse(node, "its axes are not known int64 values");
    }
    axes = given.ints;
  } else if (auto it = node.ints_attributes.find("axes"); it != node.ints_attributes.end()) {
    axes = it->second;
  }
  if (axes.empty()) {
    if (node.IntAttribute("noop_with_empty_axes", 0) != 0) return axes;
    axes.resize(rank);
    for (int64_t d = 0; d < rank; ++d) axes[d] = d;
    return axes;
  }
  for (int64_t& axis : axes) {
    if (axis < -rank || axis >= rank) {
      return Refuse(node, absl::StrCat("axis ", axis, " is outside ", DimsText(x.dims)));
    }
    if (axis < 0) axis += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    return Refuse(node, "names an axis twice");
  }
  return axes;
}

// Where each output element's elements lie in the input: output o reduces
// the input elements at bases[o] + offsets[k], k < offsets.size().
struct Groups {
  std::vector<int64_t> bases;
  std::vector<int64_t> offsets;
};

Groups GroupsOf(const OnnxNode& node, const Values& values) {
  const OnnxValue& x = values[node.inputs[0]];
  const std::vector<int64_t> axes = *ReducedAxes(node, values);  // checked by the plan
  const std::vector<int64_t> strides = StridesOf(x.dims);
  std::vector<int64_t> kept_dims, kept_strides, reduced_dims, reduced_strides;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d));
    (reduced ? reduced_dims : kept_dims).push_back(x.dims[d]);
    (reduced ? reduced_strides : kept_strides).push_back(strides[d]);
  }
  Groups groups;
  groups.bases.resize(std::max<int64_t>(OnnxElements(kept_dims), 0));
  groups.offsets.resize(std::max<int64_t>(OnnxElements(reduced_dims), 0));
  ForEachStrided(kept_dims, kept_strides, 0, [&](int64_t i, int64_t at) { groups.bases[i] = at; });
  ForEachStrided(reduced_dims, reduced_strides, 0,
                 [&](int64_t i, int64_t at) { groups.offsets[i] = at; });
  return groups;
}

absl::Status PlanReduce(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  if (x.is_int64) return Refuse(node, "reduces int64 values; float values are supported");
  ASSIGN_OR_RETURN(const std::vector<int64_t> axes, ReducedAxes(node, values));
  const bool keepdims = node.IntAttribute("keepdims", 1) != 0;
  std::vector<int64_t> dims;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d))) {
      dims.push_back(x.dims[d]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  Resize(Out(node, values), dims, false);
  return absl::OkStatus();
}

// The reduction of the n values at `at` + offsets (in double); for Max
// and Min, *chosen is the offset of the first extreme.
double Reduce(Reduction kind, const float* x, const std::vector<int64_t>& offsets,
              int64_t* chosen) {
  const int64_t n = static_cast<int64_t>(offsets.size());
  switch (kind) {
    case Reduction::kMax:
    case Reduction::kMin: {
      const bool max = kind == Reduction::kMax;
      double best =
          max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
      *chosen = n > 0 ? offsets[0] : -1;
      for (int64_t k = 0; k < n; ++k) {
        const float v = x[offsets[k]];
        if (max ? v > best : v < best) {
          best = v;
          *chosen = offsets[k];
        }
      }
      return best;
    }
    case Reduction::kProd: {
      double product = 1;
      for (int64_t k = 0; k < n; ++k) product *= x[offsets[k]];
      return product;
    }
    case Reduction::kLogSumExp: {
      double top = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < n; ++k) top = std::max<double>(top, x[offsets[k]]);
      if (!std::isfinite(top)) return top;
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(x[offsets[k]] - top);
      return top + std::log(sum);
    }
    default:
      break;
  }
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double v = x[offsets[k]];
    sum += kind == Reduction::kL1                                    ? std::abs(v)
           : kind == Reduction::kL2 || kind == Reduction::kSumSquare ? v * v
                                                                     : v;
  }
  switch (kind) {
    case Reduction::kMean:
      return n > 0 ? sum / n : 0;
    case Reduction::kL2:
      return std::sqrt(sum);
    case Reduction::kLogSum:
      return std::log(sum);
    default:
      return sum;
  }
}

// Whether the node passes its input on: no axes, and noop_with_empty_axes.
bool PassesOn(const OnnxNode& node, const Values& values) {
  return node.IntAttribute("noop_with_empty_axes", 0) != 0 && ReducedAxes(node, values)->empty();
}

void ForwardReduce(const OnnxNode& node, Values& values, const OnnxRunContext& context) {
  if (PassesOn(node, values)) return ForwardCopy(node, values, context);
  const Reduction kind = ReductionOf(node.op);
  const Groups groups = GroupsOf(node, values);
  const float* x = In(node, values, 0).data();
  OnnxValue& y = Out(node, values);
  const bool extreme = kind == Reduction::kMax || kind == Reduction::kMin;
  if (extreme) y.ints.assign(groups.bases.size(), -1);
  std::vector<int64_t> offsets(groups.offsets.size());
  for (size_t o = 0; o < groups.bases.size(); ++o) {
    for (size_t k = 0; k < offsets.size(); ++k) offsets[k] = groups.bases[o] + groups.offsets[k];
    int64_t chosen = -1;
    y.floats[o] = static_cast<float>(Reduce(kind, x, offsets, &chosen));
    if (extreme) y.ints[o] = chosen;
  }
}

void BackwardReduce(const OnnxNode& node, Values& values) {
  OnnxValue& in = In(node, values, 0);
  if (!in.takes_grad()) return;
  if (PassesOn(node, values)) return BackwardCopy(node, values);
  const Reduction kind = ReductionOf(node.op);
  const Groups groups = GroupsOf(node, values);
  const OnnxValue& y = Out(node, values);
  const float* x = in.data();
  float* dx = in.grad_data();
  const int64_t n = static_cast<int64_t>(groups.offsets.size());
  std::vector<double> before(n + 1), after(n + 1);  // ReduceProd's partial products
  for (size_t o = 0; o < groups.bases.size(); ++o) {
    const double g = y.grad[o], out = y.floats[o];
    const int64_t base = groups.bases[o];
    if (kind == Reduction::kMax || kind == Reduction::kMin) {
      if (y.ints[o] >= 0) dx[y.ints[o]] += static_cast<float>(g);
      continue;
    }
    if (kind == Reduction::kProd) {
      // The product of the others, without dividing by a value that may be 0.
      before[0] = after[n] = 1;
      for (int64_t k = 0; k < n; ++k) before[k + 1] = before[k] * x[base + groups.offsets[k]];
      for (int64_t k = n; k-- > 0;) after[k] = after[k + 1] * x[base + groups.offsets[k]];
      for (int64_t k = 0; k < n; ++k) {
        dx[base + groups.offsets[k]] += static_cast<float>(g * before[k] * after[k + 1]);
      }
      continue;
    }
    for (int64_t k = 0; k < n; ++k) {
      const int64_t at = base + groups.offsets[k];
      const double v = x[at];
      double slope = 1;
      switch (kind) {
        case Reduction::kMean:
          slope = 1.0 / n;
          break;
        case Reduction::kL1:
          slope = v > 0 ? 1 : v < 0 ? -1 : 0;
          break;
        case Reduction::kL2:
          slope = out > 0 ? v / out : 0;
          break;
        case Reduction::kLogSum:
          slope = std::exp(-out);  // 1 / sum
          break;
        case Reduction::kLogSumExp:
          slope = std::exp(v - out);
          break;
        case Reduction::kSumSquare:
          slope = 2 * v;
          break;
        default:
          break;
      }
      dx[at] += static_cast<float>(g * slope);
    }
  }
}

}  // namespace

void AddReduceKernels(std::map<std::string, OnnxKernel>& kernels) {
  for (const char* op :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
    kernels[op] = {PlanReduce, ForwardReduce, BackwardReduce, 1, 2};
  }
}

}  // namespace onnx_internal
}  // namespace pstrain
