#include "common/model/onnx/onnx_spatial_kernels.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/model/onnx/onnx_kernel_support.h"

namespace pstrain {
namespace onnx_internal {
namespace {

// One spatial axis of a window sliding over an image.
struct Axis {
  int64_t in = 0, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, out = 0;

  // The input position of output `o`'s tap `k` (outside [0, in): padding).
  int64_t At(int64_t o, int64_t k) const { return o * stride - pad_begin + k * dilation; }

  // The taps [*begin, *end) of output `o` that lie in the input.
  void Taps(int64_t o, int64_t* begin, int64_t* end) const {
    const int64_t first = o * stride - pad_begin;  // tap 0's position
    *begin = first >= 0 ? 0 : (-first + dilation - 1) / dilation;
    *end = std::min(kernel, first >= in ? 0 : (in - 1 - first) / dilation + 1);
    if (*end < *begin) *end = *begin;
  }
};

// A node's window over [batch, channels, height, width].
struct Geometry {
  int64_t batch = 0, channels = 0;
  Axis h, w;
  int64_t in_plane() const { return h.in * w.in; }
  int64_t out_plane() const { return h.out * w.out; }
};

std::vector<int64_t> IntsOr(const OnnxNode& node, const std::string& key,
                            std::vector<int64_t> fallback) {
  auto it = node.ints_attributes.find(key);
  return it == node.ints_attributes.end() ? fallback : it->second;
}

// The window of `node` over `x`, with the kernel's sides `kernel` (from the
// weights or kernel_shape). InvalidArgument saying what does not fit.
absl::StatusOr<Geometry> GeometryOf(const OnnxNode& node, const OnnxValue& x,
                                    std::vector<int64_t> kernel) {
  if (x.is_int64 || x.dims.size() != 4) {
    return Refuse(node, absl::StrCat("takes ", DimsText(x.dims),
                                     "; supported: float 2-D images [batch, channels, height, "
                                     "width]"));
  }
  // NOTSET (the pads given) and VALID (no pads) are what the pads say.
  const std::string auto_pad = node.StringAttribute("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    return Refuse(
        node, absl::StrCat("auto_pad ", auto_pad, " is not supported; export with explicit pads"));
  }
  if (node.IntAttribute("ceil_mode", 0) != 0) {
    return Refuse(node, "ceil_mode is not supported (PyTorch's default, floor, is)");
  }
  if (node.IntAttribute("storage_order", 0) != 0) {
    return Refuse(node, "storage_order 1 (column-major indices) is not supported");
  }
  const std::vector<int64_t> strides = IntsOr(node, "strides", {1, 1});
  const std::vector<int64_t> dilations = IntsOr(node, "dilations", {1, 1});
  const std::vector<int64_t> pads =
      auto_pad == "VALID" ? std::vector<int64_t>(4, 0) : IntsOr(node, "pads", {0, 0, 0, 0});
  if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2 || pads.size() != 4) {
    return Refuse(node, "kernel_shape, strides, dilations or pads do not describe a 2-D window");
  }
  Geometry g;
  g.batch = x.dims[0];
  g.channels = x.dims[1];
  Axis* axes[2] = {&g.h, &g.w};
  for (int a = 0; a < 2; ++a) {
    Axis& axis = *axes[a];
    axis.in = x.dims[2 + a];
    axis.kernel = kernel[a];
    axis.stride = strides[a];
    axis.dilation = dilations[a];
    axis.pad_begin = pads[a];
    const int64_t pad_end = pads[2 + a];
    if (axis.kernel < 1 || axis.stride < 1 || axis.dilation < 1 || axis.pad_begin < 0 ||
        pad_end < 0 || axis.kernel > (int64_t{1} << 20) || axis.stride > (int64_t{1} << 20) ||
        axis.dilation > (int64_t{1} << 20) || axis.pad_begin > (int64_t{1} << 20) ||
        pad_end > (int64_t{1} << 20)) {
      return Refuse(node, "a kernel, stride or dilation below 1, or a negative pad");
    }
    const int64_t extent = (axis.kernel - 1) * axis.dilation + 1;
    if (axis.pad_begin >= extent || pad_end >= extent) {
      return Refuse(node, "pads as wide as the window leave windows of padding only");
    }
    const int64_t span = axis.in + axis.pad_begin + pad_end - extent;
    if (span < 0) {
      return Refuse(node, absl::StrCat("its window of ", extent, " does not fit in ", axis.in,
                                       " (padded by ", axis.pad_begin, " and ", pad_end, ")"));
    }
    axis.out = span / axis.stride + 1;
  }
  return g;
}

// Per-thread scratch for the lowered matrices: sized once, reused by every
// step of the same shape.
std::vector<float>& Scratch(int which, size_t size) {
  thread_local std::vector<float> buffers[3];
  std::vector<float>& buffer = buffers[which];
  if (buffer.size() < size) buffer.resize(size);
  return buffer;
}

// ------------------------------------------------------------------ conv --

absl::Status PlanConv(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  const OnnxValue& w = In(node, values, 1);
  if (node.IntAttribute("group", 1) != 1) {
    return Refuse(node, "grouped and depthwise convolutions (group != 1) are not supported");
  }
  if (w.is_int64 || w.dims.size() != 4) {
    return Refuse(node, absl::StrCat("its weights are ", DimsText(w.dims),
                                     "; supported: float [out, in, height, width]"));
  }
  std::vector<int64_t> kernel = {w.dims[2], w.dims[3]};
  if (IntsOr(node, "kernel_shape", kernel) != kernel) {
    return Refuse(node, "kernel_shape disagrees with the weights");
  }
  absl::StatusOr<Geometry> g = GeometryOf(node, x, kernel);
  if (!g.ok()) return g.status();
  if (w.dims[1] != g->channels) {
    return Refuse(node, absl::StrCat("its weights take ", w.dims[1], " channels; the input has ",
                                     g->channels));
  }
  if (HasInput(node, 2)) {
    const OnnxValue& b = In(node, values, 2);
    if (b.is_int64 || b.dims != std::vector<int64_t>{w.dims[0]}) {
      return Refuse(node, absl::StrCat("its bias is ", DimsText(b.dims), "; the weights give ",
                                       w.dims[0], " channels"));
    }
  }
  Resize(Out(node, values), {g->batch, w.dims[0], g->h.out, g->w.out}, false);
  return absl::OkStatus();
}

// cols [channels * kh * kw, batch * out_plane]: row (c, i, j) holds, for
// every output position of every image, the input under tap (i, j) of
// channel c (0 in the padding).
void Im2Col(const Geometry& g, const float* x, float* cols) {
  const int64_t plane = g.out_plane(), wide = g.batch * plane;
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t i = 0; i < g.h.kernel; ++i) {
      for (int64_t j = 0; j < g.w.kernel; ++j) {
        float* row = cols + ((c * g.h.kernel + i) * g.w.kernel + j) * wide;
        for (int64_t n = 0; n < g.batch; ++n) {
          const float* image = x + (n * g.channels + c) * g.in_plane();
          for (int64_t oh = 0; oh < g.h.out; ++oh) {
            float* out = row + n * plane + oh * g.w.out;
            const int64_t ih = g.h.At(oh, i);
            if (ih < 0 || ih >= g.h.in) {
              std::fill_n(out, g.w.out, 0.0f);
              continue;
            }
            const float* in = image + ih * g.w.in;
            for (int64_t ow = 0; ow < g.w.out; ++ow) {
              const int64_t iw = g.w.At(ow, j);
              out[ow] = iw >= 0 && iw < g.w.in ? in[iw] : 0.0f;
            }
          }
        }
      }
    }
  }
}

// The adjoint of Im2Col: adds each element of `cols` into dx where it came from.
void Col2ImAdd(const Geometry& g, const float* cols, float* dx) {
  const int64_t plane = g.out_plane(), wide = g.batch * plane;
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t i = 0; i < g.h.kernel; ++i) {
      for (int64_t j = 0; j < g.w.kernel; ++j) {
        const float* row = cols + ((c * g.h.kernel + i) * g.w.kernel + j) * wide;
        for (int64_t n = 0; n < g.batch; ++n) {
          float* image = dx + (n * g.channels + c) * g.in_plane();
          for (int64_t oh = 0; oh < g.h.out; ++oh) {
            const int64_t ih = g.h.At(oh, i);
            if (ih < 0 || ih >= g.h.in) continue;
            const float* from = row + n * plane + oh * g.w.out;
            float* to = image + ih * g.w.in;
            for (int64_t ow = 0; ow < g.w.out; ++ow) {
              const int64_t iw = g.w.At(ow, j);
              if (iw >= 0 && iw < g.w.in) to[iw] += from[ow];
            }
          }
        }
      }
    }
  }
}

Geometry ConvGeometry(const OnnxNode& node, Values& values) {
  const OnnxValue& w = In(node, values, 1);
  return *GeometryOf(node, In(node, values, 0), {w.dims[2], w.dims[3]});  // planned
}

void ForwardConv(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const Geometry g = ConvGeometry(node, values);
  const OnnxValue& w = In(node, values, 1);
  OnnxValue& y = Out(node, values);
  const int64_t filters = w.dims[0], depth = w.num_elements() / filters;
  const int64_t plane = g.out_plane(), wide = g.batch * plane;
  float* cols = Scratch(0, depth * wide).data();
  float* product = Scratch(1, filters * wide).data();
  Im2Col(g, In(node, values, 0).data(), cols);
  Sgemm(false, false, filters, wide, depth, 1.0f, w.data(), cols, 0.0f, product);
  const float* bias = HasInput(node, 2) ? In(node, values, 2).data() : nullptr;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t f = 0; f < filters; ++f) {
      const float* from = product + f * wide + n * plane;
      float* to = y.floats.data() + (n * filters + f) * plane;
      const float b = bias != nullptr ? bias[f] : 0.0f;
      for (int64_t p = 0; p < plane; ++p) to[p] = from[p] + b;
    }
  }
}

void BackwardConv(const OnnxNode& node, Values& values) {
  const Geometry g = ConvGeometry(node, values);
  OnnxValue& x = In(node, values, 0);
  OnnxValue& w = In(node, values, 1);
  const OnnxValue& y = Out(node, values);
  const int64_t filters = w.dims[0], depth = w.num_elements() / filters;
  const int64_t plane = g.out_plane(), wide = g.batch * plane;
  // dy as [filters, batch * plane], the layout of the forward product.
  float* dy = Scratch(1, filters * wide).data();
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t f = 0; f < filters; ++f) {
      std::copy_n(y.grad.data() + (n * filters + f) * plane, plane, dy + f * wide + n * plane);
    }
  }
  if (HasInput(node, 2) && In(node, values, 2).takes_grad()) {
    float* db = In(node, values, 2).grad_data();
    for (int64_t f = 0; f < filters; ++f) {
      double sum = 0;
      for (int64_t k = 0; k < wide; ++k) sum += dy[f * wide + k];
      db[f] += static_cast<float>(sum);
    }
  }
  float* cols = Scratch(0, depth * wide).data();
  if (w.takes_grad()) {
    Im2Col(g, x.data(), cols);
    Sgemm(false, true, filters, depth, wide, 1.0f, dy, cols, 1.0f, w.grad_data());
  }
  if (x.takes_grad()) {
    Sgemm(true, false, depth, wide, filters, 1.0f, w.data(), dy, 0.0f, cols);
    Col2ImAdd(g, cols, x.grad_data());
  }
}

// --------------------------------------------------------------- pooling --

absl::Status PlanPool(const OnnxNode& node, Values& values) {
  if (node.outputs.size() > 1 && node.outputs[1] >= 0) {
    return Refuse(node, "its Indices output is not supported");
  }
  auto kernel = node.ints_attributes.find("kernel_shape");
  if (kernel == node.ints_attributes.end()) return Refuse(node, "has no kernel_shape");
  absl::StatusOr<Geometry> g = GeometryOf(node, In(node, values, 0), kernel->second);
  if (!g.ok()) return g.status();
  Resize(Out(node, values), {g->batch, g->channels, g->h.out, g->w.out}, false);
  return absl::OkStatus();
}

Geometry PoolGeometry(const OnnxNode& node, Values& values) {
  return *GeometryOf(node, In(node, values, 0), node.ints_attributes.at("kernel_shape"));
}

// Calls visit(out_index, tap_index) for every tap of every window that lies
// in the image, with indices into the output and the input; `done(out,
// taps)` after each window, with how many taps it visited.
template <typename Visit, typename Done>
void ForEachWindow(const Geometry& g, Visit visit, Done done) {
  for (int64_t image = 0; image < g.batch * g.channels; ++image) {
    for (int64_t oh = 0; oh < g.h.out; ++oh) {
      for (int64_t ow = 0; ow < g.w.out; ++ow) {
        const int64_t out = (image * g.h.out + oh) * g.w.out + ow;
        int64_t i_begin, i_end, j_begin, j_end;
        g.h.Taps(oh, &i_begin, &i_end);
        g.w.Taps(ow, &j_begin, &j_end);
        for (int64_t i = i_begin; i < i_end; ++i) {
          const int64_t row = image * g.in_plane() + g.h.At(oh, i) * g.w.in;
          for (int64_t j = j_begin; j < j_end; ++j) visit(out, row + g.w.At(ow, j));
        }
        done(out, (i_end - i_begin) * (j_end - j_begin));
      }
    }
  }
}

// The position of each window's maximum is kept in the output's ints for
// Backward (the first of equal maxima, as PyTorch takes).
void ForwardMaxPool(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const Geometry g = PoolGeometry(node, values);
  const float* x = In(node, values, 0).data();
  OnnxValue& y = Out(node, values);
  y.ints.assign(y.floats.size(), -1);
  std::fill(y.floats.begin(), y.floats.end(), -std::numeric_limits<float>::infinity());
  ForEachWindow(
      g,
      [&](int64_t out, int64_t at) {
        if (x[at] > y.floats[out] || y.ints[out] < 0) {
          y.floats[out] = x[at];
          y.ints[out] = at;
        }
      },
      [](int64_t, int64_t) {});
}

void BackwardMaxPool(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  if (!x.takes_grad()) return;
  const OnnxValue& y = Out(node, values);
  float* dx = x.grad_data();
  for (size_t out = 0; out < y.grad.size(); ++out) {
    if (y.ints[out] >= 0) dx[y.ints[out]] += y.grad[out];
  }
}

// The divisor of a window of `taps` in the image: those taps, or the whole
// kernel with count_include_pad.
class AverageDivisor {
 public:
  AverageDivisor(const OnnxNode& node, const Geometry& g)
      : whole_kernel_(node.IntAttribute("count_include_pad", 0) != 0 ? g.h.kernel * g.w.kernel
                                                                     : 0) {}
  float operator()(int64_t taps) const {
    return static_cast<float>(whole_kernel_ > 0 ? whole_kernel_ : std::max<int64_t>(taps, 1));
  }

 private:
  const int64_t whole_kernel_;  // 0: count the taps
};

void ForwardAveragePool(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const Geometry g = PoolGeometry(node, values);
  const AverageDivisor divisor(node, g);
  const float* x = In(node, values, 0).data();
  std::vector<float>& y = Out(node, values).floats;
  std::fill(y.begin(), y.end(), 0.0f);
  ForEachWindow(
      g, [&](int64_t out, int64_t at) { y[out] += x[at]; },
      [&](int64_t out, int64_t taps) { y[out] /= divisor(taps); });
}

void BackwardAveragePool(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  if (!x.takes_grad()) return;
  const Geometry g = PoolGeometry(node, values);
  const AverageDivisor divisor(node, g);
  const std::vector<float>& dy = Out(node, values).grad;
  float* dx = x.grad_data();
  // Each window's taps first, to know its divisor; then the shares.
  std::vector<int64_t> window;
  ForEachWindow(
      g, [&](int64_t, int64_t at) { window.push_back(at); },
      [&](int64_t out, int64_t taps) {
        const float share = dy[out] / divisor(taps);
        for (int64_t at : window) dx[at] += share;
        window.clear();
      });
}

absl::Status PlanGlobalAveragePool(const OnnxNode& node, Values& values) {
  const OnnxValue& x = In(node, values, 0);
  if (x.is_int64 || x.dims.size() != 4 || x.dims[2] * x.dims[3] < 1) {
    return Refuse(node, absl::StrCat("takes ", DimsText(x.dims),
                                     "; supported: float 2-D images [batch, channels, height, "
                                     "width]"));
  }
  Resize(Out(node, values), {x.dims[0], x.dims[1], 1, 1}, false);
  return absl::OkStatus();
}

void ForwardGlobalAveragePool(const OnnxNode& node, Values& values, const OnnxRunContext&) {
  const OnnxValue& x = In(node, values, 0);
  std::vector<float>& y = Out(node, values).floats;
  const int64_t plane = x.dims[2] * x.dims[3];
  for (size_t image = 0; image < y.size(); ++image) {
    double sum = 0;
    for (int64_t k = 0; k < plane; ++k) sum += x.data()[image * plane + k];
    y[image] = static_cast<float>(sum / plane);
  }
}

void BackwardGlobalAveragePool(const OnnxNode& node, Values& values) {
  OnnxValue& x = In(node, values, 0);
  if (!x.takes_grad()) return;
  const std::vector<float>& dy = Out(node, values).grad;
  float* dx = x.grad_data();
  const int64_t plane = x.dims[2] * x.dims[3];
  for (size_t image = 0; image < dy.size(); ++image) {
    const float share = dy[image] / static_cast<float>(plane);
    for (int64_t k = 0; k < plane; ++k) dx[image * plane + k] += share;
  }
}

}  // namespace

void AddSpatialKernels(std::map<std::string, OnnxKernel>& kernels) {
  kernels["Conv"] = {PlanConv, ForwardConv, BackwardConv, 2, 3};
  kernels["MaxPool"] = {PlanPool, ForwardMaxPool, BackwardMaxPool, 1, 1};
  kernels["AveragePool"] = {PlanPool, ForwardAveragePool, BackwardAveragePool, 1, 1};
  kernels["GlobalAveragePool"] = {PlanGlobalAveragePool, ForwardGlobalAveragePool,
                                  BackwardGlobalAveragePool, 1, 1};
}

}  // namespace onnx_internal
}  // namespace pstrain
