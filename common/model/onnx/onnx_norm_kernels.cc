#include "common/model/onnx/onnx_norm_kernels.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/model/onnx/onnx_kernel_support.h"

namespace pstrain {
namespace onnx_internal {
namespace {

// ---------------------------------------------------- layer normalization --

// LayerNormalization's rows: `outer` rows of `inner` elements, each
// normalised on its own (the dims from `axis` on).
struct LayerRows {
  int64_t axis = 0, outer = 1, inner = 1;
};

LayerRows LayerRowsOf(const OnnxNode& node, const OnnxValue& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  LayerRows rows;
  rows.axis = node.IntAttribute("axis", -1);
  if (rows.axis < 0) rows.axis += rank;
  for (int64_t d = 0; d < rank; ++d) (d < rows.axis ? rows.outer : rows.inner) *= x.dims[d];
  return rows;
}

// `dims` without its leading 1s.
std::vector<int64_t> WithoutLeadingOnes(const std::vector<int64_t>& dims) {
  size_t skip = 0;
  while (skip < dims.size() && dims[skip] == 1) ++skip;
  return std::vector<int64_t>(dims.begin() + skip, dims.end());
}

absl::Status PlanLayerNorm(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t axis = node.IntAttribute("axis", -1);
  if (axis < 0) axis += rank;
  if (x.is_int64 || rank == 0 || axis < 0 || axis >= rank) {
    return Refuse(node, absl::StrCat("axis ", node.IntAttribute("axis", -1),
                                     " does not name a dim of a float input ", DimsText(x.dims)));
  }
  // stash_type is the precision of the mean and variance: float (1), which
  // pstrain computes in, is what a float32 graph writes.
  if (node.IntAttribute("stash_type", 1) != 1) {
    return Refuse(node, absl::StrCat("stash_type ", node.IntAttribute("stash_type", 1),
                                     " is not supported; 1 (float) is"));
  }
  const std::vector<int64_t> row(x.dims.begin() + axis, x.dims.end());
  for (int i = 1; i <= 2; ++i) {
    if (!HasInput(node, i)) continue;
    const OnnxValue& p = In(node, values, i);
    if (p.is_int64 || WithoutLeadingOnes(p.dims) != WithoutLeadingOnes(row)) {
      return Refuse(node,
                    absl::StrCat(i == 1 ? "its Scale is " : "its B is ", DimsText(p.dims),
                                 "; supported: float of the normalised dims ", DimsText(row)));
    }
  }
  Resize(Out(node, values), x.dims, false);
  // Mean and InvStdDev: one per row, the normalised dims kept as 1s.
  std::vector<int64_t> stat_dims(x.dims.begin(), x.dims.begin() + axis);
  stat_dims.resize(rank, 1);
  for (int i = 1; i <= 2; ++i) {
    if (static_cast<int>(node.outputs.size()) > i && node.outputs[i] >= 0) {
      Resize(Out(node, values, i), stat_dims, false);
    }
  }
  return absl::OkStatus();
}

// A row's mean and 1 / sqrt(variance + epsilon), in double.
void RowMoments(const float* x, int64_t n, float epsilon, double* mean, double* inv) {
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) sum += x[k];
  *mean = sum / n;
  double squares = 0;
  for (int64_t k = 0; k < n; ++k) squares += (x[k] - *mean) * (x[k] - *mean);
  *inv = 1.0 / std::sqrt(squares / n + epsilon);
}

void ForwardLayerNorm(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& x = In(node, values, 0);
  const LayerRows rows = LayerRowsOf(node, x);
  const float epsilon = node.FloatAttribute("epsilon", 1e-5f);
  const float* scale = In(node, values, 1).data();
  const float* bias = HasInput(node, 2) ? In(node, values, 2).data() : nullptr;
  float* y = Out(node, values).floats.data();
  float* means = node.outputs.size() > 1 && node.outputs[1] >= 0
                     ? Out(node, values, 1).floats.data()
                     : nullptr;
  float* invs = node.outputs.size() > 2 && node.outputs[2] >= 0 ? Out(node, values, 2).floats.data()
                                                                : nullptr;
  for (int64_t r = 0; r < rows.outer; ++r) {
    const float* in = x.data() + r * rows.inner;
    float* out = y + r * rows.inner;
    double mean, inv;
    RowMoments(in, rows.inner, epsilon, &mean, &inv);
    for (int64_t k = 0; k < rows.inner; ++k) {
      const float normalised = static_cast<float>((in[k] - mean) * inv);
      out[k] = normalised * scale[k] + (bias != nullptr ? bias[k] : 0.0f);
    }
    if (means != nullptr) means[r] = static_cast<float>(mean);
    if (invs != nullptr) invs[r] = static_cast<float>(inv);
  }
}

// With x^ = (x - mean) * inv and g = dy * scale, per row of n:
//   dx = inv * (g - mean(g) - x^ * mean(g * x^)),
// plus what reaches x through the Mean and InvStdDev outputs when they are
// read (d mean / dx = 1 / n; d inv / dx = -inv^2 x^ / n).
void BackwardLayerNorm(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  OnnxValue& scale = In(node, values, 1);
  OnnxValue* bias = HasInput(node, 2) ? &In(node, values, 2) : nullptr;
  const LayerRows rows = LayerRowsOf(node, x);
  const float epsilon = node.FloatAttribute("epsilon", 1e-5f);
  const int64_t n = rows.inner;
  const float* dy = Out(node, values).grad.data();
  const float* d_mean =
      node.outputs.size() > 1 && node.outputs[1] >= 0 ? Out(node, values, 1).grad.data() : nullptr;
  const float* d_inv =
      node.outputs.size() > 2 && node.outputs[2] >= 0 ? Out(node, values, 2).grad.data() : nullptr;
  float* dx = x.takes_grad() ? x.grad_data() : nullptr;
  float* d_scale = scale.takes_grad() ? scale.grad_data() : nullptr;
  float* d_bias = bias != nullptr && bias->takes_grad() ? bias->grad_data() : nullptr;
  const float* s = scale.data();
  std::vector<double> normalised(n);
  for (int64_t r = 0; r < rows.outer; ++r) {
    const float* in = x.data() + r * n;
    const float* g_out = dy + r * n;
    double mean, inv;
    RowMoments(in, n, epsilon, &mean, &inv);
    double g_sum = 0, g_dot = 0;
    for (int64_t k = 0; k < n; ++k) {
      normalised[k] = (in[k] - mean) * inv;
      const double g = static_cast<double>(g_out[k]) * s[k];
      g_sum += g;
      g_dot += g * normalised[k];
      if (d_scale != nullptr) d_scale[k] += static_cast<float>(g_out[k] * normalised[k]);
      if (d_bias != nullptr) d_bias[k] += g_out[k];
    }
    if (dx == nullptr) continue;
    const double through_mean = d_mean != nullptr ? d_mean[r] : 0.0;
    const double through_inv = d_inv != nullptr ? d_inv[r] : 0.0;
    float* d_in = dx + r * n;
    for (int64_t k = 0; k < n; ++k) {
      const double g = static_cast<double>(g_out[k]) * s[k];
      d_in[k] += static_cast<float>(inv * (g - g_sum / n - normalised[k] * g_dot / n) +
                                    through_mean / n - through_inv * inv * inv * normalised[k] / n);
    }
  }
}

// ---------------------------------------------------- batch normalization --

// BatchNormalization's inputs after X, in order.
constexpr const char* kChannelInputs[] = {"scale", "B", "input_mean", "input_var"};

absl::Status PlanBatchNorm(const OnnxNode& node, Values& values) {
  if (node.IntAttribute("training_mode", 0) != 0) {
    return Refuse(node,
                  "training_mode 1 updates the running mean and variance from each batch; "
                  "pstrain keeps them as the statistics the file holds (export the model in "
                  "eval mode, which writes the inference form)");
  }
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] >= 0) {
      return Refuse(node,
                    "writes its running statistics (outputs after Y), which only the training "
                    "form computes; export the model in eval mode");
    }
  }
  const OnnxValue& x = In(node, values, 0);
  if (x.is_int64 || x.dims.size() < 2) {
    return Refuse(node, absl::StrCat("takes ", DimsText(x.dims),
                                     "; supported: float [batch, channels, ...]"));
  }
  const int64_t channels = x.dims[1];
  for (int i = 1; i <= 4; ++i) {
    const OnnxValue& p = In(node, values, i);
    if (p.is_int64 || p.dims != std::vector<int64_t>{channels}) {
      return Refuse(node, absl::StrCat("its ", kChannelInputs[i - 1], " is ", DimsText(p.dims),
                                       "; the input has ", channels, " channels"));
    }
  }
  Resize(Out(node, values), x.dims, false);
  return absl::OkStatus();
}

// Calls fn(c, block) for each block of one channel's elements: `inner`
// values of channel c of one example, at offset `block`.
template <typename Fn>
void ForEachChannelBlock(const OnnxValue& x, Fn fn) {
  const int64_t channels = x.dims[1];
  int64_t inner = 1;
  for (size_t d = 2; d < x.dims.size(); ++d) inner *= x.dims[d];
  for (int64_t n = 0; n < x.dims[0]; ++n) {
    for (int64_t c = 0; c < channels; ++c) fn(c, (n * channels + c) * inner, inner);
  }
}

// 1 / sqrt(var + epsilon) of channel c.
float InvStd(const OnnxNode& node, const float* var, int64_t c) {
  return 1.0f / std::sqrt(var[c] + node.FloatAttribute("epsilon", 1e-5f));
}

void ForwardBatchNorm(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& x = In(node, values, 0);
  const float* scale = In(node, values, 1).data();
  const float* bias = In(node, values, 2).data();
  const float* mean = In(node, values, 3).data();
  const float* var = In(node, values, 4).data();
  float* y = Out(node, values).floats.data();
  ForEachChannelBlock(x, [&](int64_t c, int64_t at, int64_t inner) {
    const float a = scale[c] * InvStd(node, var, c);
    for (int64_t k = at; k < at + inner; ++k) y[k] = (x.data()[k] - mean[c]) * a + bias[c];
  });
}

// Scale and B take gradients; so do the mean and variance when they are
// computed values (as initializers they are statistics, which take none).
void BackwardBatchNorm(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  float* d[5] = {};  // by input: its gradient, if it takes one
  for (int i = 0; i <= 4; ++i) {
    OnnxValue& p = In(node, values, i);
    d[i] = p.takes_grad() ? p.grad_data() : nullptr;
  }
  const float* scale = In(node, values, 1).data();
  const float* mean = In(node, values, 3).data();
  const float* var = In(node, values, 4).data();
  const float* dy = Out(node, values).grad.data();
  ForEachChannelBlock(x, [&](int64_t c, int64_t at, int64_t inner) {
    const float inv = InvStd(node, var, c);
    double g_sum = 0, g_dot = 0;  // sum(dy) and sum(dy * (x - mean))
    for (int64_t k = at; k < at + inner; ++k) {
      g_sum += dy[k];
      g_dot += static_cast<double>(dy[k]) * (x.data()[k] - mean[c]);
      if (d[0] != nullptr) d[0][k] += dy[k] * scale[c] * inv;
    }
    if (d[1] != nullptr) d[1][c] += static_cast<float>(g_dot * inv);
    if (d[2] != nullptr) d[2][c] += static_cast<float>(g_sum);
    if (d[3] != nullptr) d[3][c] -= static_cast<float>(g_sum * scale[c] * inv);
    if (d[4] != nullptr) d[4][c] -= static_cast<float>(0.5 * g_dot * scale[c] * inv * inv * inv);
  });
}

}  // namespace

void AddNormKernels(std::map<std::string, OnnxKernel>& kernels) {
  kernels["LayerNormalization"] = {PlanLayerNorm, ForwardLayerNorm, BackwardLayerNorm, 2, 3};
  kernels["BatchNormalization"] = {PlanBatchNorm, ForwardBatchNorm, BackwardBatchNorm, 5, 5};
}

}  // namespace onnx_internal
}  // namespace pstrain
