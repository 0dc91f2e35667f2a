#include "common/model/onnx/onnx_kernels.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/model/onnx/onnx_kernel_support.h"
#include "common/model/onnx/onnx_norm_kernels.h"
#include "common/model/onnx/onnx_reduce_kernels.h"
#include "common/model/onnx/onnx_shape_kernels.h"
#include "common/model/onnx/onnx_spatial_kernels.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

using onnx_internal::BackwardCopy;
using onnx_internal::DimsText;
using onnx_internal::ForEachStrided;
using onnx_internal::ForwardCopy;
using onnx_internal::HasInput;
using onnx_internal::In;
using onnx_internal::Out;
using onnx_internal::Refuse;
using onnx_internal::Resize;
using onnx_internal::Sgemm;
using onnx_internal::Values;

// ------------------------------------------------------------ broadcast --

// Numpy's broadcast of two shapes, or an error.
absl::StatusOr<std::vector<int64_t>> Broadcast(const std::vector<int64_t>& a,
                                               const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(DimsText(a), " and ", DimsText(b), " do not broadcast"));
    }
    out[out.size() - 1 - i] = std::max(da, db);
  }
  return out;
}

// For each element of `out_dims`, the element of an input of `in_dims`
// broadcast to it.
std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& out_dims,
                                    const std::vector<int64_t>& in_dims) {
  const size_t rank = out_dims.size();
  std::vector<int64_t> in_stride(rank, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    const size_t axis = rank - 1 - i;
    const int64_t dim = in_dims[in_dims.size() - 1 - i];
    in_stride[axis] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  std::vector<int64_t> index(std::max<int64_t>(OnnxElements(out_dims), 0));
  ForEachStrided(out_dims, in_stride, 0, [&](int64_t i, int64_t at) { index[i] = at; });
  return index;
}

// Which element of an input broadcast to `out_dims` each output element
// reads: the same one (same dims), the only one (a scalar), one of a row
// repeated over the leading dims (a bias), or through an index map.
class Broadcaster {
 public:
  Broadcaster(const std::vector<int64_t>& out_dims, const OnnxValue& in) {
    const int64_t n = in.num_elements();
    if (in.dims == out_dims) {
      mode_ = Mode::kSame;
    } else if (n == 1) {
      mode_ = Mode::kScalar;
    } else if (!out_dims.empty() && n == out_dims.back() && in.dims.back() == n) {
      mode_ = Mode::kRow;
      row_ = n;
    } else {
      mode_ = Mode::kMap;
      map_ = BroadcastIndex(out_dims, in.dims);
    }
  }

  int64_t operator[](int64_t i) const {
    switch (mode_) {
      case Mode::kSame:
        return i;
      case Mode::kScalar:
        return 0;
      case Mode::kRow:
        return i % row_;
      case Mode::kMap:
        break;
    }
    return map_[i];
  }

 private:
  enum class Mode { kSame, kScalar, kRow, kMap };
  Mode mode_ = Mode::kSame;
  int64_t row_ = 1;
  std::vector<int64_t> map_;
};

// ------------------------------------------------------------ elementwise --

enum class Binary { kAdd, kSub, kMul, kDiv };

Binary BinaryOf(const std::string& op) {
  if (op == "Add") return Binary::kAdd;
  if (op == "Sub") return Binary::kSub;
  if (op == "Mul") return Binary::kMul;
  return Binary::kDiv;
}

// Shape arithmetic wraps instead of overflowing; a division by zero was
// refused when planned.
int64_t Apply(Binary kind, int64_t a, int64_t b) {
  const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
  switch (kind) {
    case Binary::kAdd:
      return static_cast<int64_t>(x + y);
    case Binary::kSub:
      return static_cast<int64_t>(x - y);
    case Binary::kMul:
      return static_cast<int64_t>(x * y);
    case Binary::kDiv:
      return b == -1 ? static_cast<int64_t>(0 - x) : a / b;
  }
  return a;
}

template <typename T>
T Apply(Binary kind, T a, T b) {
  switch (kind) {
    case Binary::kAdd:
      return a + b;
    case Binary::kSub:
      return a - b;
    case Binary::kMul:
      return a * b;
    case Binary::kDiv:
      return a / b;
  }
  return a;
}

absl::Status PlanBinary(const OnnxNode& node, Values& values) {
  const OnnxValue& a = In(node, values, 0);
  const OnnxValue& b = In(node, values, 1);
  if (a.is_int64 != b.is_int64) return Refuse(node, "mixes int64 and float inputs");
  absl::StatusOr<std::vector<int64_t>> dims = Broadcast(a.dims, b.dims);
  if (!dims.ok()) return Refuse(node, std::string(dims.status().message()));
  if (a.is_int64 && !(a.known && b.known)) {
    return Refuse(node, "int64 arithmetic is supported on shapes only");
  }
  if (a.is_int64 && node.op == "Div" &&
      std::find(b.ints.begin(), b.ints.end(), 0) != b.ints.end()) {
    return Refuse(node, "divides a shape by zero");
  }
  Resize(Out(node, values), *dims, a.is_int64);
  return absl::OkStatus();
}

void ForwardBinary(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& a = In(node, values, 0);
  const OnnxValue& b = In(node, values, 1);
  OnnxValue& out = Out(node, values);
  const Binary kind = BinaryOf(node.op);
  const Broadcaster ia(out.dims, a), ib(out.dims, b);
  const int64_t n = out.num_elements();
  if (out.is_int64) {
    for (int64_t i = 0; i < n; ++i) out.ints[i] = Apply(kind, a.ints[ia[i]], b.ints[ib[i]]);
    return;
  }
  const float* x = a.data();
  const float* y = b.data();
  for (int64_t i = 0; i < n; ++i) out.floats[i] = Apply(kind, x[ia[i]], y[ib[i]]);
}

void BackwardBinary(const OnnxNode& node, Values& values) {
  OnnxValue& a = In(node, values, 0);
  OnnxValue& b = In(node, values, 1);
  const OnnxValue& out = Out(node, values);
  const Binary kind = BinaryOf(node.op);
  const Broadcaster ia(out.dims, a), ib(out.dims, b);
  float* da = a.takes_grad() ? a.grad_data() : nullptr;
  float* db = b.takes_grad() ? b.grad_data() : nullptr;
  const float* av = a.data();
  const float* bv = b.data();
  const int64_t n = out.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const float g = out.grad[i], x = av[ia[i]], y = bv[ib[i]];
    switch (kind) {
      case Binary::kAdd:
        if (da) da[ia[i]] += g;
        if (db) db[ib[i]] += g;
        break;
      case Binary::kSub:
        if (da) da[ia[i]] += g;
        if (db) db[ib[i]] -= g;
        break;
      case Binary::kMul:
        if (da) da[ia[i]] += g * y;
        if (db) db[ib[i]] += g * x;
        break;
      case Binary::kDiv:
        if (da) da[ia[i]] += g / y;
        if (db) db[ib[i]] -= g * x / (y * y);
        break;
    }
  }
}

absl::Status PlanUnary(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  if (x.is_int64 && node.op != "Identity") return Refuse(node, "needs a float input");
  Resize(Out(node, values), x.dims, x.is_int64);
  return absl::OkStatus();
}

// Elementwise ops: y = Value(x), and dy/dx = Slope(x, y), each a struct
// so that the loops below inline and vectorise them.
struct Relu {
  static float Value(float x, float) { return x > 0 ? x : 0.0f; }
  static float Slope(float x, float, float) { return x > 0 ? 1.0f : 0.0f; }
};
struct LeakyRelu {
  static float Value(float x, float alpha) { return x >= 0 ? x : alpha * x; }
  static float Slope(float x, float, float alpha) { return x >= 0 ? 1.0f : alpha; }
};
struct Sigmoid {
  static float Value(float x, float) { return 1.0f / (1.0f + std::exp(-x)); }
  static float Slope(float, float y, float) { return y * (1.0f - y); }
};
struct Tanh {
  static float Value(float x, float) { return std::tanh(x); }
  static float Slope(float, float y, float) { return 1.0f - y * y; }
};
struct Erf {
  static float Value(float x, float) { return std::erf(x); }
  static float Slope(float x, float, float) {
    return static_cast<float>(M_2_SQRTPI) * std::exp(-x * x);
  }
};

// Gelu (opset 20): x * Phi(x), exactly (approximate "none") or by tanh.
struct Gelu {
  static float Value(float x, float) { return 0.5f * x * (1.0f + std::erf(x * kHalfSqrt2)); }
  static float Slope(float x, float, float) {
    return 0.5f * (1.0f + std::erf(x * kHalfSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
  }
  static constexpr float kHalfSqrt2 = static_cast<float>(M_SQRT1_2);
  static constexpr float kInvSqrt2Pi = static_cast<float>(M_2_SQRTPI * M_SQRT1_2 * 0.5);
};
struct GeluTanh {
  static float Inner(float x) { return kSqrt2OverPi * (x + 0.044715f * x * x * x); }
  static float Value(float x, float) { return 0.5f * x * (1.0f + std::tanh(Inner(x))); }
  static float Slope(float x, float, float) {
    const float t = std::tanh(Inner(x));
    return 0.5f * (1.0f + t) +
           0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3 * 0.044715f * x * x);
  }
  static constexpr float kSqrt2OverPi = static_cast<float>(M_2_SQRTPI * M_SQRT1_2);
};

template <typename Op>
void ForwardElementwise(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const float alpha = node.FloatAttribute("alpha", 0.01f);  // LeakyRelu's
  const float* x = In(node, values, 0).data();
  std::vector<float>& y = Out(node, values).floats;
  const int64_t n = static_cast<int64_t>(y.size());
  for (int64_t i = 0; i < n; ++i) y[i] = Op::Value(x[i], alpha);
}

template <typename Op>
void BackwardElementwise(const OnnxNode& node, Values& values) {
  OnnxValue& in = In(node, values, 0);
  if (!in.takes_grad()) return;
  const float alpha = node.FloatAttribute("alpha", 0.01f);
  const OnnxValue& out = Out(node, values);
  const float* x = in.data();
  const float* y = out.floats.data();
  const float* dy = out.grad.data();
  float* dx = in.grad_data();
  const int64_t n = static_cast<int64_t>(out.floats.size());
  for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * Op::Slope(x[i], y[i], alpha);
}

absl::Status PlanGelu(const OnnxNode& node, Values& values) {
  const std::string approximate = node.StringAttribute("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    return Refuse(node, absl::StrCat("approximate \"", approximate,
                                     "\" is not supported; \"none\" and \"tanh\" are"));
  }
  return PlanUnary(node, values);
}

bool GeluByTanh(const OnnxNode& node) {
  return node.StringAttribute("approximate", "none") == "tanh";
}

void ForwardGelu(const OnnxNode& node, Values& values, const OnnxRunContext& context) {
  if (GeluByTanh(node)) return ForwardElementwise<GeluTanh>(node, values, context);
  ForwardElementwise<Gelu>(node, values, context);
}

void BackwardGelu(const OnnxNode& node, Values& values) {
  if (GeluByTanh(node)) return BackwardElementwise<GeluTanh>(node, values);
  BackwardElementwise<Gelu>(node, values);
}

// ---------------------------------------------------------------- matmul --

struct GemmShape {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1, beta = 1;
  // A batched MatMul's products: [..., m, k] by [..., k, n], the leading
  // dims the same on both sides (torch.bmm, and a DLRM's interactions).
  int64_t batches = 1;
};

// MatMul is Gemm without C, its A's leading dims folded into m when B is
// one matrix.
GemmShape GemmShapeOf(const OnnxNode& node, const Values& values) {
  const OnnxValue& a = values[node.inputs[0]];
  const OnnxValue& b = values[node.inputs[1]];
  GemmShape s;
  if (node.op == "Gemm") {
    s.trans_a = node.IntAttribute("transA", 0) != 0;
    s.trans_b = node.IntAttribute("transB", 0) != 0;
    s.alpha = node.FloatAttribute("alpha", 1.0f);
    s.beta = node.FloatAttribute("beta", 1.0f);
    s.m = s.trans_a ? a.dims[1] : a.dims[0];
    s.k = s.trans_a ? a.dims[0] : a.dims[1];
  } else if (b.dims.size() > 2) {
    s.k = a.dims.back();
    s.m = a.dims[a.dims.size() - 2];
    s.batches = a.num_elements() / std::max<int64_t>(s.m * s.k, 1);
    s.n = b.dims.back();
    return s;
  } else {
    s.k = a.dims.back();
    s.m = a.num_elements() / std::max<int64_t>(s.k, 1);
  }
  s.n = s.trans_b ? b.dims[0] : b.dims[1];
  return s;
}

// A batched MatMul's operands agree: the same leading dims, and A's
// columns are B's rows.
bool BatchesFit(const OnnxValue& a, const OnnxValue& b) {
  const size_t rank = b.dims.size();
  return a.dims.size() == rank && std::equal(a.dims.begin(), a.dims.end() - 2, b.dims.begin()) &&
         a.dims[rank - 1] == b.dims[rank - 2];
}

absl::Status PlanMatMul(const OnnxNode& node, Values& values) {
  const OnnxValue& a = In(node, values, 0);
  const OnnxValue& b = In(node, values, 1);
  if (a.is_int64 || b.is_int64) return Refuse(node, "needs float inputs");
  const bool gemm = node.op == "Gemm";
  if (!gemm && b.dims.size() > 2) {
    if (!BatchesFit(a, b)) {
      return Refuse(node, absl::StrCat("multiplies ", DimsText(a.dims), " by ", DimsText(b.dims),
                                       "; supported: [..., k] by [k, n], and [..., m, k] by "
                                       "[..., k, n] with the same leading dims"));
    }
    std::vector<int64_t> dims = a.dims;
    dims.back() = b.dims.back();
    Resize(Out(node, values), dims, false);
    return absl::OkStatus();
  }
  if (b.dims.size() != 2 || (gemm ? a.dims.size() != 2 : a.dims.size() < 2)) {
    return Refuse(node, absl::StrCat("multiplies ", DimsText(a.dims), " by ", DimsText(b.dims),
                                     "; supported: [..., k] by [k, n], and [..., m, k] by "
                                     "[..., k, n] with the same leading dims"));
  }
  const GemmShape s = GemmShapeOf(node, values);
  if ((s.trans_b ? b.dims[1] : b.dims[0]) != s.k) {
    return Refuse(node, absl::StrCat(DimsText(a.dims), " and ", DimsText(b.dims), " do not fit"));
  }
  std::vector<int64_t> dims = {s.m, s.n};
  if (!gemm) {
    dims.assign(a.dims.begin(), a.dims.end() - 1);
    dims.push_back(s.n);
  }
  if (gemm && HasInput(node, 2)) {
    absl::StatusOr<std::vector<int64_t>> c = Broadcast(dims, In(node, values, 2).dims);
    if (!c.ok() || *c != dims) return Refuse(node, "C does not broadcast to the product");
  }
  Resize(Out(node, values), dims, false);
  return absl::OkStatus();
}

// Whether Gemm's C is one row of the product's n columns, repeated down
// its rows ([n] or [1, n]; a scalar is not, even when n is 1).
bool IsBiasRow(const OnnxValue& c, int64_t n) {
  return !c.dims.empty() && c.dims.back() == n && c.num_elements() == n;
}

void ForwardMatMul(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const GemmShape s = GemmShapeOf(node, values);
  OnnxValue& y = Out(node, values);
  float beta = 0;
  if (node.op == "Gemm" && HasInput(node, 2)) {
    const OnnxValue& c = In(node, values, 2);
    float* out = y.floats.data();
    if (IsBiasRow(c, s.n)) {
      // A bias row, repeated down the rows.
      for (int64_t row = 0; row < s.m; ++row) {
        for (int64_t j = 0; j < s.n; ++j) out[row * s.n + j] = s.beta * c.data()[j];
      }
    } else {
      const Broadcaster ic(y.dims, c);
      const int64_t n = y.num_elements();
      for (int64_t i = 0; i < n; ++i) out[i] = s.beta * c.data()[ic[i]];
    }
    beta = 1;
  }
  const float* a = In(node, values, 0).data();
  const float* b = In(node, values, 1).data();
  for (int64_t i = 0; i < s.batches; ++i) {
    Sgemm(s.trans_a, s.trans_b, s.m, s.n, s.k, s.alpha, a + i * s.m * s.k, b + i * s.k * s.n, beta,
          y.floats.data() + i * s.m * s.n);
  }
}

void BackwardMatMul(const OnnxNode& node, Values& values) {
  const GemmShape s = GemmShapeOf(node, values);
  OnnxValue& a = In(node, values, 0);
  OnnxValue& b = In(node, values, 1);
  const OnnxValue& y = Out(node, values);
  for (int64_t i = 0; i < s.batches; ++i) {
    const float* g = y.grad.data() + i * s.m * s.n;
    const int64_t at_a = i * s.m * s.k, at_b = i * s.k * s.n;
    if (a.takes_grad()) {
      // dA = alpha g op(B)^T, or its transpose when A is transposed.
      if (!s.trans_a) {
        Sgemm(false, !s.trans_b, s.m, s.k, s.n, s.alpha, g, b.data() + at_b, 1,
              a.grad_data() + at_a);
      } else {
        Sgemm(s.trans_b, true, s.k, s.m, s.n, s.alpha, b.data() + at_b, g, 1, a.grad_data() + at_a);
      }
    }
    if (b.takes_grad()) {
      // dB = alpha op(A)^T g, or its transpose when B is transposed.
      if (!s.trans_b) {
        Sgemm(!s.trans_a, false, s.k, s.n, s.m, s.alpha, a.data() + at_a, g, 1,
              b.grad_data() + at_b);
      } else {
        Sgemm(true, s.trans_a, s.n, s.k, s.m, s.alpha, g, a.data() + at_a, 1, b.grad_data() + at_b);
      }
    }
  }
  if (node.op == "Gemm" && HasInput(node, 2) && In(node, values, 2).takes_grad()) {
    const float* g = y.grad.data();
    OnnxValue& c = In(node, values, 2);
    float* dc = c.grad_data();
    if (IsBiasRow(c, s.n)) {
      // A bias row: the column sums.
      for (int64_t row = 0; row < s.m; ++row) {
        for (int64_t j = 0; j < s.n; ++j) dc[j] += s.beta * g[row * s.n + j];
      }
    } else {
      const Broadcaster ic(y.dims, c);
      const int64_t n = y.num_elements();
      for (int64_t i = 0; i < n; ++i) dc[ic[i]] += s.beta * g[i];
    }
  }
}

// --------------------------------------------------------------- softmax --

absl::Status PlanSoftmax(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const int64_t axis = node.IntAttribute("axis", -1);
  if (x.is_int64 || rank == 0 || (axis != -1 && axis != rank - 1) || x.dims.back() < 1) {
    return Refuse(node, "supported over the last, non-empty axis of a float input only");
  }
  Resize(Out(node, values), x.dims, false);
  return absl::OkStatus();
}

void ForwardSoftmax(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& x = In(node, values, 0);
  OnnxValue& y = Out(node, values);
  const int64_t width = x.dims.back();
  const bool log = node.op == "LogSoftmax";
  for (int64_t row = 0; row < x.num_elements() / std::max<int64_t>(width, 1); ++row) {
    const float* in = x.data() + row * width;
    float* out = y.floats.data() + row * width;
    const float top = *std::max_element(in, in + width);
    double sum = 0;
    for (int64_t k = 0; k < width; ++k) sum += std::exp(static_cast<double>(in[k] - top));
    const float log_sum = static_cast<float>(std::log(sum));
    for (int64_t k = 0; k < width; ++k) {
      out[k] = log ? in[k] - top - log_sum : std::exp(in[k] - top - log_sum);
    }
  }
}

void BackwardSoftmax(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  if (!x.takes_grad()) return;
  const OnnxValue& y = Out(node, values);
  const int64_t width = x.dims.back();
  const bool log = node.op == "LogSoftmax";
  for (int64_t row = 0; row < x.num_elements() / std::max<int64_t>(width, 1); ++row) {
    const float* out = y.floats.data() + row * width;
    const float* g = y.grad.data() + row * width;
    float* dx = x.grad_data() + row * width;
    double dot = 0;
    for (int64_t k = 0; k < width; ++k) dot += log ? g[k] : g[k] * out[k];
    for (int64_t k = 0; k < width; ++k) {
      dx[k] += log ? g[k] - std::exp(out[k]) * static_cast<float>(dot)
                   : out[k] * (g[k] - static_cast<float>(dot));
    }
  }
}

// --------------------------------------------------------------- dropout --

absl::Status PlanDropout(const OnnxNode& node, Values& values) {
  if (node.outputs.size() > 1 && node.outputs[1] >= 0) {
    return Refuse(node, "its mask output is not supported");
  }
  if (HasInput(node, 1)) {
    const OnnxValue& ratio = In(node, values, 1);
    if (!ratio.known || ratio.is_int64 || ratio.floats.size() != 1 ||
        !(ratio.floats[0] >= 0 && ratio.floats[0] < 1)) {
      return Refuse(node, "its ratio is not a known number in [0, 1)");
    }
  }
  return PlanUnary(node, values);
}

// Training: each element kept (scaled by 1 / (1 - ratio)) or dropped, the
// mask kept in the output's ints for Backward.
void ForwardDropout(const OnnxNode& node, Values& values, const OnnxRunContext& context) {
  const OnnxValue& x = In(node, values, 0);
  OnnxValue& y = Out(node, values);
  const float ratio = HasInput(node, 1) ? In(node, values, 1).floats[0] : 0.5f;
  const float* in = x.data();
  if (context.mode != PassMode::kTrain || ratio <= 0 || context.random == nullptr) {
    y.floats.assign(in, in + x.num_elements());
    y.ints.clear();
    return;
  }
  std::bernoulli_distribution keep(1.0 - ratio);
  const float scale = 1.0f / (1.0f - ratio);
  y.ints.resize(y.floats.size());
  for (size_t i = 0; i < y.floats.size(); ++i) {
    y.ints[i] = keep(*context.random) ? 1 : 0;
    y.floats[i] = y.ints[i] != 0 ? in[i] * scale : 0.0f;
  }
}

void BackwardDropout(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  if (!x.takes_grad()) return;
  const OnnxValue& y = Out(node, values);
  if (y.ints.empty()) {
    BackwardCopy(node, values);
    return;
  }
  const float ratio = HasInput(node, 1) ? In(node, values, 1).floats[0] : 0.5f;
  const float scale = 1.0f / (1.0f - ratio);
  float* dx = x.grad_data();
  for (size_t i = 0; i < y.grad.size(); ++i) {
    if (y.ints[i] != 0) dx[i] += y.grad[i] * scale;
  }
}

const std::map<std::string, OnnxKernel>& Kernels() {
  static const auto* kernels = [] {
    auto* kernels = new std::map<std::string, OnnxKernel>{
        {"Add", {PlanBinary, ForwardBinary, BackwardBinary, 2, 2}},
        {"Sub", {PlanBinary, ForwardBinary, BackwardBinary, 2, 2}},
        {"Mul", {PlanBinary, ForwardBinary, BackwardBinary, 2, 2}},
        {"Div", {PlanBinary, ForwardBinary, BackwardBinary, 2, 2}},
        {"Relu", {PlanUnary, ForwardElementwise<Relu>, BackwardElementwise<Relu>, 1, 1}},
        {"LeakyRelu",
         {PlanUnary, ForwardElementwise<LeakyRelu>, BackwardElementwise<LeakyRelu>, 1, 1}},
        {"Sigmoid", {PlanUnary, ForwardElementwise<Sigmoid>, BackwardElementwise<Sigmoid>, 1, 1}},
        {"Tanh", {PlanUnary, ForwardElementwise<Tanh>, BackwardElementwise<Tanh>, 1, 1}},
        {"Erf", {PlanUnary, ForwardElementwise<Erf>, BackwardElementwise<Erf>, 1, 1}},
        {"Gelu", {PlanGelu, ForwardGelu, BackwardGelu, 1, 1}},
        {"Identity", {PlanUnary, ForwardCopy, BackwardCopy, 1, 1}},
        {"Dropout", {PlanDropout, ForwardDropout, BackwardDropout, 1, 3}},
        {"Gemm", {PlanMatMul, ForwardMatMul, BackwardMatMul, 2, 3}},
        {"MatMul", {PlanMatMul, ForwardMatMul, BackwardMatMul, 2, 2}},
        {"Softmax", {PlanSoftmax, ForwardSoftmax, BackwardSoftmax, 1, 1}},
        {"LogSoftmax", {PlanSoftmax, ForwardSoftmax, BackwardSoftmax, 1, 1}},
    };
    onnx_internal::AddShapeKernels(*kernels);
    onnx_internal::AddSpatialKernels(*kernels);
    onnx_internal::AddNormKernels(*kernels);
    onnx_internal::AddReduceKernels(*kernels);
    return kernels;
  }();
  return *kernels;
}

}  // namespace

const OnnxKernel* FindOnnxKernel(absl::string_view op) {
  auto it = Kernels().find(std::string(op));
  return it == Kernels().end() ? nullptr : &it->second;
}

std::string SupportedOnnxOps() {
  std::vector<std::string> ops;
  for (const auto& [op, kernel] : Kernels()) ops.push_back(op);
  ops.push_back("Constant");
  std::sort(ops.begin(), ops.end());
  return absl::StrJoin(ops, ", ");
}

}  // namespace pstrain
