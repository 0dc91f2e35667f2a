#include "common/model/onnx/onnx_shape_kernels.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/model/onnx/onnx_kernel_support.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace onnx_internal {
namespace {

absl::Status PlanFlatten(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  int64_t axis = node.IntAttribute("axis", 1);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return Refuse(node, absl::StrCat("axis outside ", DimsText(x.dims)));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x.dims[i];
  Resize(Out(node, values), {outer, inner}, x.is_int64);
  return absl::OkStatus();
}

absl::Status PlanReshape(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  const OnnxValue& shape = In(node, values, 1);
  if (!shape.is_int64 || !shape.known) {
    return Refuse(node, "its shape is not known once the batch size is");
  }
  if (node.IntAttribute("allowzero", 0) != 0) return Refuse(node, "allowzero is not supported");
  std::vector<int64_t> dims(shape.ints.begin(), shape.ints.end());
  int64_t infer = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) {
      if (i >= x.dims.size()) return Refuse(node, "copies a dim the input does not have");
      dims[i] = x.dims[i];
    }
    if (dims[i] == -1) {
      if (infer >= 0) return Refuse(node, "infers two dims");
      infer = static_cast<int64_t>(i);
    }
  }
  const std::string cannot =
      absl::StrCat("cannot reshape ", DimsText(x.dims), " to ", DimsText(shape.ints));
  if (infer >= 0) {
    dims[infer] = 1;
    const int64_t known = OnnxElements(dims);  // -1: a negative dim, or too many
    if (known < 0) return Refuse(node, cannot);
    dims[infer] = known == 0 ? 0 : x.num_elements() / known;
  }
  if (OnnxElements(dims) != x.num_elements()) return Refuse(node, cannot);
  Resize(Out(node, values), dims, x.is_int64);
  return absl::OkStatus();
}

absl::Status PlanUnsqueeze(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  if (!HasInput(node, 1) || !In(node, values, 1).known || !In(node, values, 1).is_int64) {
    return Refuse(node, "needs its axes as a constant int64 input (opset 13)");
  }
  std::vector<int64_t> axes = In(node, values, 1).ints;
  const int64_t rank = static_cast<int64_t>(x.dims.size() + axes.size());
  for (int64_t& axis : axes) axis = axis < 0 ? axis + rank : axis;
  std::sort(axes.begin(), axes.end());
  std::vector<int64_t> dims = x.dims;
  for (int64_t axis : axes) {
    if (axis < 0 || axis > static_cast<int64_t>(dims.size()))
      return Refuse(node, "axis out of range");
    dims.insert(dims.begin() + axis, 1);
  }
  Resize(Out(node, values), dims, x.is_int64);
  return absl::OkStatus();
}

// Squeeze takes its axes as an input (opset 13 on). Without them it would
// drop every dim of 1, the batch's too when a batch of one is planned, so
// they are required.
absl::Status PlanSqueeze(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  if (!HasInput(node, 1) || !In(node, values, 1).known || !In(node, values, 1).is_int64) {
    return Refuse(node,
                  "needs its axes as a constant int64 input; without them it would drop every "
                  "dim of 1, the batch's too when it is 1");
  }
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<bool> dropped(rank, false);
  for (int64_t axis : In(node, values, 1).ints) {
    if (axis < -rank || axis >= rank) return Refuse(node, "axis out of range");
    if (axis < 0) axis += rank;
    if (x.dims[axis] != 1) {
      return Refuse(
          node, absl::StrCat("squeezes dim ", axis, " of ", DimsText(x.dims), ", which is not 1"));
    }
    dropped[axis] = true;
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!dropped[d]) dims.push_back(x.dims[d]);
  }
  Resize(Out(node, values), dims, x.is_int64);
  return absl::OkStatus();
}

// ------------------------------------------------------- shape arithmetic --

absl::Status PlanShape(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t start = node.IntAttribute("start", 0), end = node.IntAttribute("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  OnnxValue& out = Out(node, values);
  Resize(out, {end - start}, /*is_int64=*/true);
  std::copy(x.dims.begin() + start, x.dims.begin() + end, out.ints.begin());
  out.known = true;  // the dims are, whatever the values
  return absl::OkStatus();
}

void ForwardNothing(const OnnxNode&, Values&, const OnnxRunContext&) {}

// Gather's axis, as a dim of its data (InvalidArgument out of range).
absl::StatusOr<int64_t> GatherAxis(const OnnxNode& node, const OnnxValue& data) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  int64_t axis = node.IntAttribute("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Refuse(node, "axis out of range");
  return axis;
}

// Shape arithmetic (int64 data and indices, both known) is computed here,
// at plan time. Float data, an activation or an embedding table, is
// gathered by Forward; indices known now are checked now, and those that
// are not are an embedding table's rows, which OnnxProgram gives in range.
// Ids (int64 data that is not known) selected by known indices, as
// PyTorch's ids[:, k] writes, are gathered by Forward too.
absl::Status PlanGather(const OnnxNode& node, Values& values) {
  const OnnxValue& data = In(node, values, 0);
  const OnnxValue& indices = In(node, values, 1);
  if (!indices.is_int64) return Refuse(node, "its indices are not int64");
  if (data.dims.empty()) return Refuse(node, "gathers from a scalar");
  ASSIGN_OR_RETURN(const int64_t axis, GatherAxis(node, data));
  const int64_t n = data.dims[axis];
  if (indices.known) {
    for (int64_t at : indices.ints) {
      if (at < -n || at >= n) return Refuse(node, absl::StrCat("index ", at, " out of range"));
    }
  }
  std::vector<int64_t> dims(data.dims.begin(), data.dims.begin() + axis);
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  OnnxValue& out = Out(node, values);
  if (!data.is_int64) {
    Resize(out, std::move(dims), /*is_int64=*/false);
    return absl::OkStatus();
  }
  if (!data.known && indices.known) {
    Resize(out, std::move(dims), /*is_int64=*/true);
    return absl::OkStatus();
  }
  if (!data.known || !indices.known || data.dims.size() != 1) {
    return Refuse(node, "gathers int64 values that are not a known 1-D shape");
  }
  Resize(out, std::move(dims), /*is_int64=*/true);
  for (size_t i = 0; i < indices.ints.size(); ++i) {
    out.ints[i] = data.ints[indices.ints[i] < 0 ? indices.ints[i] + n : indices.ints[i]];
  }
  return absl::OkStatus();
}

// Calls visit(from, to, width) for each block Gather copies: `width` floats
// of its data from offset `from` to its output at `to`.
template <typename Visit>
void ForEachGathered(const OnnxNode& node, const Values& values, Visit visit) {
  const OnnxValue& data = values[node.inputs[0]];
  const OnnxValue& indices = values[node.inputs[1]];
  const int64_t axis = *GatherAxis(node, data);  // checked by the plan
  int64_t outer = 1, width = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.dims[d];
  for (size_t d = axis + 1; d < data.dims.size(); ++d) width *= data.dims[d];
  const int64_t n = data.dims[axis];
  const int64_t k = static_cast<int64_t>(indices.ints.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t at = indices.ints[j] < 0 ? indices.ints[j] + n : indices.ints[j];
      visit((o * n + at) * width, (o * k + j) * width, width);
    }
  }
}

void ForwardGather(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& data = In(node, values, 0);
  if (data.is_int64) {
    if (data.known) return;  // shape arithmetic, computed by the plan
    std::vector<int64_t>& to = Out(node, values).ints;
    ForEachGathered(node, values, [&](int64_t in, int64_t out, int64_t width) {
      std::copy_n(data.ints.begin() + in, width, to.begin() + out);
    });
    return;
  }
  const float* from = data.data();
  float* to = Out(node, values).floats.data();
  ForEachGathered(node, values, [&](int64_t in, int64_t out, int64_t width) {
    std::copy_n(from + in, width, to + out);
  });
}

void BackwardGather(const OnnxNode& node, Values& values) {
  OnnxValue& data = In(node, values, 0);
  if (data.is_int64 || !data.takes_grad()) return;
  float* d_data = data.grad_data();
  const float* d_out = Out(node, values).grad.data();
  ForEachGathered(node, values, [&](int64_t in, int64_t out, int64_t width) {
    for (int64_t i = 0; i < width; ++i) d_data[in + i] += d_out[out + i];
  });
}

absl::Status PlanConcat(const OnnxNode& node, Values& values) {
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    if (!HasInput(node, i)) return Refuse(node, absl::StrCat("leaves its input ", i, " out"));
  }
  const OnnxValue& first = In(node, values, 0);
  const int64_t rank = static_cast<int64_t>(first.dims.size());
  int64_t axis = node.IntAttribute("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Refuse(node, "axis out of range");
  std::vector<int64_t> dims = first.dims;
  dims[axis] = 0;
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    const OnnxValue& in = In(node, values, i);
    if (in.is_int64 != first.is_int64 || in.dims.size() != first.dims.size()) {
      return Refuse(node, "inputs of different types or ranks");
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && in.dims[d] != first.dims[d]) return Refuse(node, "inputs that do not fit");
    }
    dims[axis] += in.dims[axis];
  }
  Resize(Out(node, values), dims, first.is_int64);
  return absl::OkStatus();
}

// Calls fn(input, outer, offset along the output's inner block, inner size).
template <typename Fn>
void ForEachConcatBlock(const OnnxNode& node, Values& values, Fn fn) {
  const OnnxValue& out = Out(node, values);
  int64_t axis = node.IntAttribute("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(out.dims.size());
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out.dims[d];
  const int64_t out_inner = out.num_elements() / std::max<int64_t>(outer, 1);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t offset = 0;
    for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
      OnnxValue& in = In(node, values, i);
      const int64_t inner = in.num_elements() / std::max<int64_t>(outer, 1);
      fn(in, o * inner, o * out_inner + offset, inner);
      offset += inner;
    }
  }
}

void ForwardConcat(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  OnnxValue& out = Out(node, values);
  ForEachConcatBlock(node, values, [&](OnnxValue& in, int64_t from, int64_t to, int64_t n) {
    if (out.is_int64) {
      std::copy_n(in.ints.begin() + from, n, out.ints.begin() + to);
    } else {
      std::copy_n(in.data() + from, n, out.floats.begin() + to);
    }
  });
}

void BackwardConcat(const OnnxNode& node, Values& values) {
  const OnnxValue& out = Out(node, values);
  ForEachConcatBlock(node, values, [&](OnnxValue& in, int64_t from, int64_t to, int64_t n) {
    if (!in.takes_grad()) return;
    float* d_in = in.grad_data();
    for (int64_t k = 0; k < n; ++k) d_in[from + k] += out.grad[to + k];
  });
}

// ----------------------------------------------------------------- split --

// Split's axis and the size of each output along it: the `split` input
// (opset 13 on), else opset 18's num_outputs (each ceil(dim / n), the last
// what is left), else equal parts, one per output.
struct SplitParts {
  int64_t axis = 0;
  std::vector<int64_t> sizes;
};

absl::StatusOr<SplitParts> SplitPartsOf(const OnnxNode& node, const Values& values) {
  const OnnxValue& x = values[node.inputs[0]];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  SplitParts parts;
  parts.axis = node.IntAttribute("axis", 0);
  if (parts.axis < -rank || parts.axis >= rank) return Refuse(node, "axis out of range");
  if (parts.axis < 0) parts.axis += rank;
  const int64_t dim = x.dims[parts.axis];
  const int64_t n = static_cast<int64_t>(node.outputs.size());
  if (HasInput(node, 1)) {
    const OnnxValue& split = values[node.inputs[1]];
    if (!split.is_int64 || !split.known) return Refuse(node, "its split is not known int64 values");
    parts.sizes = split.ints;
  } else if (node.int_attributes.count("num_outputs") > 0) {
    if (node.IntAttribute("num_outputs", 0) != n) {
      return Refuse(node, absl::StrCat("num_outputs is ", node.IntAttribute("num_outputs", 0),
                                       "; it has ", n, " outputs"));
    }
    const int64_t chunk = (dim + n - 1) / n;
    parts.sizes.assign(n, chunk);
    parts.sizes.back() = dim - chunk * (n - 1);
  } else {
    if (dim % n != 0) {
      return Refuse(node, absl::StrCat("splits dim ", parts.axis, " of ", DimsText(x.dims),
                                       " into ", n, " equal parts"));
    }
    parts.sizes.assign(n, dim / n);
  }
  int64_t total = 0;
  for (int64_t size : parts.sizes) {
    if (size < 0) total = -1;
    if (total >= 0) total += size;
  }
  if (static_cast<int64_t>(parts.sizes.size()) != n || total != dim) {
    return Refuse(node,
                  absl::StrCat("parts ", DimsText(parts.sizes), " do not split dim ", parts.axis,
                               " of ", DimsText(x.dims), " into its ", n, " outputs"));
  }
  return parts;
}

absl::Status PlanSplit(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  ASSIGN_OR_RETURN(const SplitParts parts, SplitPartsOf(node, values));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] < 0) continue;
    std::vector<int64_t> dims = x.dims;
    dims[parts.axis] = parts.sizes[i];
    Resize(Out(node, values, i), dims, x.is_int64);
  }
  return absl::OkStatus();
}

// Calls fn(output, offset in the input, offset in the output, count) for
// each block of consecutive elements Split copies.
template <typename Fn>
void ForEachSplitBlock(const OnnxNode& node, Values& values, Fn fn) {
  const OnnxValue& x = In(node, values, 0);
  const SplitParts parts = *SplitPartsOf(node, values);  // checked by the plan
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(x.dims.size()); ++d) {
    if (d < parts.axis) outer *= x.dims[d];
    if (d > parts.axis) inner *= x.dims[d];
  }
  const int64_t dim = x.dims[parts.axis];
  int64_t offset = 0;
  for (size_t i = 0; i < parts.sizes.size(); ++i) {
    const int64_t width = parts.sizes[i] * inner;
    if (node.outputs[i] >= 0) {
      for (int64_t o = 0; o < outer; ++o) {
        fn(Out(node, values, i), (o * dim + offset) * inner, o * width, width);
      }
    }
    offset += parts.sizes[i];
  }
}

void ForwardSplit(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& x = In(node, values, 0);
  ForEachSplitBlock(node, values, [&](OnnxValue& y, int64_t from, int64_t to, int64_t n) {
    if (x.is_int64) {
      std::copy_n(x.ints.begin() + from, n, y.ints.begin() + to);
    } else {
      std::copy_n(x.data() + from, n, y.floats.begin() + to);
    }
  });
}

void BackwardSplit(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  if (!x.takes_grad()) return;
  float* dx = x.grad_data();
  ForEachSplitBlock(node, values, [&](OnnxValue& y, int64_t from, int64_t to, int64_t n) {
    for (int64_t k = 0; k < n; ++k) dx[from + k] += y.grad[to + k];
  });
}

// ------------------------------------------------------------- transpose --

// The node's perm attribute, or ONNX's default for `rank` dims: reversed.
std::vector<int64_t> TransposePerm(const OnnxNode& node, size_t rank) {
  if (auto it = node.ints_attributes.find("perm"); it != node.ints_attributes.end()) {
    return it->second;
  }
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  return perm;
}

absl::Status PlanTranspose(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const std::vector<int64_t> perm = TransposePerm(node, rank);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (x.is_int64 || sorted != identity) {
    return Refuse(node, absl::StrCat("perm ", DimsText(perm), " does not permute the dims of ",
                                     x.is_int64 ? "an int64 " : "", DimsText(x.dims)));
  }
  std::vector<int64_t> dims(rank);
  for (int64_t i = 0; i < rank; ++i) dims[i] = x.dims[perm[i]];
  Resize(Out(node, values), dims, false);
  return absl::OkStatus();
}

// Calls fn(output index, input index) for every element, in output order.
template <typename Fn>
void ForEachTransposed(const OnnxNode& node, const OnnxValue& x, const OnnxValue& y, Fn fn) {
  const std::vector<int64_t> perm = TransposePerm(node, x.dims.size());
  const std::vector<int64_t> in_strides = StridesOf(x.dims);
  std::vector<int64_t> strides(perm.size());  // the input stride of each output dim
  for (size_t i = 0; i < perm.size(); ++i) strides[i] = in_strides[perm[i]];
  ForEachStrided(y.dims, strides, 0, fn);
}

void ForwardTranspose(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& x = In(node, values, 0);
  OnnxValue& y = Out(node, values);
  const float* from = x.data();
  ForEachTransposed(node, x, y, [&](int64_t out, int64_t in) { y.floats[out] = from[in]; });
}

void BackwardTranspose(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  if (!x.takes_grad()) return;
  const OnnxValue& y = Out(node, values);
  float* dx = x.grad_data();
  ForEachTransposed(node, x, y, [&](int64_t out, int64_t in) { dx[in] += y.grad[out]; });
}

// ------------------------------------------------------------------- pad --

// Pad's pads for every dim of its input (ONNX's order: every begin, then
// every end). From opset 18 an optional `axes` input names the dims the
// pads are for; the others are not padded.
absl::StatusOr<std::vector<int64_t>> PadsOf(const OnnxNode& node, const Values& values) {
  const OnnxValue& x = values[node.inputs[0]];
  const OnnxValue& pads = values[node.inputs[1]];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (HasInput(node, 3)) {
    const OnnxValue& given = values[node.inputs[3]];
    if (!given.is_int64 || !given.known) {
      return Refuse(node, "its axes are not known int64 values");
    }
    axes = given.ints;
    for (int64_t& axis : axes) {
      if (axis < -rank || axis >= rank) {
        return Refuse(node, absl::StrCat("axes ", DimsText(given.ints), " name a dim outside ",
                                         DimsText(x.dims)));
      }
      if (axis < 0) axis += rank;
    }
  }
  const int64_t n = static_cast<int64_t>(axes.size());
  if (!pads.is_int64 || !pads.known || static_cast<int64_t>(pads.ints.size()) != 2 * n) {
    return Refuse(node, absl::StrCat("its pads are not known int64 [", 2 * n, "] for ", n,
                                     " axes of an input of rank ", rank));
  }
  std::vector<int64_t> full(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (int64_t i = 0; i < n; ++i) {
    if (seen[axes[i]]) return Refuse(node, absl::StrCat("axes name dim ", axes[i], " twice"));
    seen[axes[i]] = true;
    full[axes[i]] = pads.ints[i];
    full[rank + axes[i]] = pads.ints[n + i];
  }
  return full;
}

absl::Status PlanPad(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  const size_t rank = x.dims.size();
  // Opset 19's edge and wrap modes, like reflect, are refused here.
  if (node.StringAttribute("mode", "constant") != "constant") {
    return Refuse(node, absl::StrCat("mode ", node.StringAttribute("mode", ""),
                                     " is not supported; constant is"));
  }
  if (x.is_int64) return Refuse(node, "pads an int64 input; float inputs are supported");
  ASSIGN_OR_RETURN(const std::vector<int64_t> pads, PadsOf(node, values));
  if (HasInput(node, 2)) {
    const OnnxValue& constant = In(node, values, 2);
    if (!constant.known || constant.is_int64 || constant.floats.size() != 1) {
      return Refuse(node, "its constant_value is not a known float");
    }
  }
  std::vector<int64_t> dims = x.dims;
  for (size_t axis = 0; axis < rank; ++axis) {
    const int64_t begin = pads[axis], end = pads[rank + axis];
    if (begin < 0 || end < 0 || begin > kMaxOnnxValueElements || end > kMaxOnnxValueElements) {
      return Refuse(node, absl::StrCat("pads ", DimsText(In(node, values, 1).ints),
                                       ": only pads from 0 up are supported (no cropping)"));
    }
    dims[axis] += begin + end;
  }
  Resize(Out(node, values), dims, false);
  return absl::OkStatus();
}

// Calls fn(input index, output index) for every element of x, which the
// output y holds with `pads` (ONNX's order: every begin, then every end).
template <typename Fn>
void ForEachPadded(const OnnxValue& x, const std::vector<int64_t>& pads, const OnnxValue& y,
                   Fn fn) {
  const std::vector<int64_t> strides = StridesOf(y.dims);
  int64_t base = 0;
  for (size_t axis = 0; axis < strides.size(); ++axis) base += pads[axis] * strides[axis];
  ForEachStrided(x.dims, strides, base, fn);
}

void ForwardPad(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& x = In(node, values, 0);
  OnnxValue& y = Out(node, values);
  const float constant = HasInput(node, 2) ? In(node, values, 2).floats[0] : 0.0f;
  std::fill(y.floats.begin(), y.floats.end(), constant);
  const float* from = x.data();
  ForEachPadded(x, *PadsOf(node, values), y,  // checked by the plan
                [&](int64_t in, int64_t out) { y.floats[out] = from[in]; });
}

void BackwardPad(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  if (!x.takes_grad()) return;
  const OnnxValue& y = Out(node, values);
  float* dx = x.grad_data();
  ForEachPadded(x, *PadsOf(node, values), y,  // checked by the plan
                [&](int64_t in, int64_t out) { dx[in] += y.grad[out]; });
}

}  // namespace

void AddShapeKernels(std::map<std::string, OnnxKernel>& kernels) {
  kernels["Flatten"] = {PlanFlatten, ForwardCopy, BackwardCopy, 1, 1};
  kernels["Reshape"] = {PlanReshape, ForwardCopy, BackwardCopy, 2, 2};
  kernels["Unsqueeze"] = {PlanUnsqueeze, ForwardCopy, BackwardCopy, 2, 2};
  kernels["Squeeze"] = {PlanSqueeze, ForwardCopy, BackwardCopy, 1, 2};
  kernels["Concat"] = {PlanConcat, ForwardConcat, BackwardConcat, 1, kOnnxAnyNumberOfInputs};
  kernels["Shape"] = {PlanShape, ForwardNothing, nullptr, 1, 1};
  kernels["Gather"] = {PlanGather, ForwardGather, BackwardGather, 2, 2};
  kernels["Split"] = {PlanSplit, ForwardSplit, BackwardSplit, 1, 2};
  kernels["Transpose"] = {PlanTranspose, ForwardTranspose, BackwardTranspose, 1, 1};
  kernels["Pad"] = {PlanPad, ForwardPad, BackwardPad, 2, 4};
}

}  // namespace onnx_internal
}  // namespace pstrain
