#include "common/model/layers/pooling.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/model/dnnl/dnnl_status.h"

namespace pstrain {
namespace {

using dnnl::memory;
using Tag = dnnl::memory::format_tag;
using DataType = dnnl::memory::data_type;

}  // namespace

Pooling::Pooling(ComputeContext* context, PoolingKind kind, int64_t window, int64_t stride)
    : context_(context), kind_(kind), window_(window), stride_(stride) {}

absl::StatusOr<Pooling::Primitives*> Pooling::GetPrimitives(int64_t batch, int64_t height,
                                                            int64_t width, int64_t channels) {
  if (batch < 1 || channels < 1 || window_ < 1 || stride_ < 1 || height < window_ ||
      width < window_) {
    return absl::InvalidArgumentError(absl::StrCat("pooling window ", window_, " stride ", stride_,
                                                   " cannot run on ", batch, " images of ", height,
                                                   "x", width, "x", channels));
  }
  return cache_.GetOrBuild({batch, height, width, channels}, [&]() -> absl::StatusOr<Primitives> {
    Primitives p;
    const dnnl::engine& engine = context_->engine();
    absl::Status status = CallDnnl("pooling setup", [&] {
      const memory::desc src_md({batch, channels, height, width}, DataType::f32, Tag::nhwc);
      const memory::desc dst_md({batch, channels, OutputSize(height), OutputSize(width)},
                                DataType::f32, Tag::nhwc);
      const dnnl::algorithm algorithm = kind_ == PoolingKind::kMax
                                            ? dnnl::algorithm::pooling_max
                                            : dnnl::algorithm::pooling_avg_exclude_padding;
      const memory::dims strides = {stride_, stride_}, kernel = {window_, window_},
                         padding = {0, 0};
      const dnnl::pooling_forward::primitive_desc forward_pd(
          dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, algorithm, src_md, dst_md,
                                      strides, kernel, padding, padding),
          engine);
      const dnnl::pooling_backward::primitive_desc backward_pd(
          dnnl::pooling_backward::desc(algorithm, src_md, dst_md, strides, kernel, padding,
                                       padding),
          engine, forward_pd);
      p.implementation =
          absl::StrCat(forward_pd.impl_info_str(), " / ", backward_pd.impl_info_str());
      p.forward = dnnl::pooling_forward(forward_pd);
      p.backward = dnnl::pooling_backward(backward_pd);
      p.src = memory(src_md, engine, DNNL_MEMORY_NONE);
      p.dst = memory(dst_md, engine, DNNL_MEMORY_NONE);
      p.diff_src = memory(src_md, engine, DNNL_MEMORY_NONE);
      p.diff_dst = memory(dst_md, engine, DNNL_MEMORY_NONE);
      if (kind_ == PoolingKind::kMax) p.workspace = memory(forward_pd.workspace_desc(), engine);
    });
    if (!status.ok()) return status;
    return p;
  });
}

std::string Pooling::Implementation(int64_t batch, int64_t height, int64_t width,
                                    int64_t channels) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch, height, width, channels);
  return found.ok() ? (*found)->implementation : "";
}

absl::Status Pooling::Forward(int64_t batch, int64_t height, int64_t width, int64_t channels,
                              const float* x, float* y) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch, height, width, channels);
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  return CallDnnl("pooling forward", [&] {
    p.src.set_data_handle(const_cast<float*>(x));
    p.dst.set_data_handle(y);
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_DST, p.dst}};
    if (kind_ == PoolingKind::kMax) args[DNNL_ARG_WORKSPACE] = p.workspace;
    p.forward.execute(context_->stream(), args);
    context_->stream().wait();
  });
}

absl::Status Pooling::Backward(int64_t batch, int64_t height, int64_t width, int64_t channels,
                               const float* dy, float* dx) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch, height, width, channels);
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  return CallDnnl("pooling backward", [&] {
    p.diff_dst.set_data_handle(const_cast<float*>(dy));
    p.diff_src.set_data_handle(dx);
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_DIFF_DST, p.diff_dst},
                                                  {DNNL_ARG_DIFF_SRC, p.diff_src}};
    if (kind_ == PoolingKind::kMax) args[DNNL_ARG_WORKSPACE] = p.workspace;
    p.backward.execute(context_->stream(), args);
    context_->stream().wait();
  });
}

}  // namespace pstrain
