#include "common/model/layers/convolution.h"

#include "absl/strings/str_cat.h"
#include "common/model/dnnl/dnnl_status.h"

namespace pstrain {
namespace {

using dnnl::memory;
using Tag = dnnl::memory::format_tag;
using DataType = dnnl::memory::data_type;

}  // namespace

Convolution::Convolution(ComputeContext* context, const ConvolutionConfig& config)
    : context_(context), config_(config) {
  if (config_.padding < 0) config_.padding = config_.kernel / 2;
}

int64_t Convolution::OutputHeight(int64_t height) const {
  return (height + 2 * config_.padding - config_.kernel) / config_.stride + 1;
}

double Convolution::ForwardFlops(int64_t batch, int64_t height, int64_t width) const {
  return 2.0 * batch * OutputHeight(height) * OutputWidth(width) * config_.out_channels *
         config_.in_channels * config_.kernel * config_.kernel;
}

namespace {

// Stages `plain` for a primitive that wants `wanted`; `input` says which way
// the reorder runs.
template <typename Staged>
void Stage(const memory::desc& plain, const memory::desc& wanted, const dnnl::engine& engine,
           bool input, Staged* staged) {
  staged->user = memory(plain, engine, DNNL_MEMORY_NONE);
  staged->reordered = plain != wanted;
  if (!staged->reordered) {
    staged->internal = staged->user;
    return;
  }
  staged->internal = memory(wanted, engine);
  staged->reorder = input ? dnnl::reorder(staged->user, staged->internal)
                          : dnnl::reorder(staged->internal, staged->user);
}

template <typename Staged>
void StageIn(Staged& staged, const void* data, dnnl::stream& stream) {
  staged.user.set_data_handle(const_cast<void*>(data));
  if (staged.reordered) staged.reorder.execute(stream, staged.user, staged.internal);
}

template <typename Staged>
void StageOut(Staged& staged, dnnl::stream& stream) {
  if (staged.reordered) staged.reorder.execute(stream, staged.internal, staged.user);
}

}  // namespace

absl::StatusOr<Convolution::Primitives*> Convolution::GetPrimitives(int64_t batch, int64_t height,
                                                                    int64_t width) {
  if (batch < 1 || height < 1 || width < 1 || config_.kernel < 1 || config_.stride < 1 ||
      OutputHeight(height) < 1 || OutputWidth(width) < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "convolution of ", config_.kernel, "x", config_.kernel, " stride ", config_.stride,
        " cannot run on a batch of ", batch, " images of ", height, "x", width));
  }
  return cache_.GetOrBuild({batch, height, width}, [&]() -> absl::StatusOr<Primitives> {
    Primitives p;
    const dnnl::engine& engine = context_->engine();
    absl::Status status = CallDnnl("convolution setup", [&] {
      const int64_t c = config_.in_channels, o = config_.out_channels, k = config_.kernel;
      const memory::dims src_dims = {batch, c, height, width};
      const memory::dims weights_dims = {o, c, k, k};
      const memory::dims dst_dims = {batch, o, OutputHeight(height), OutputWidth(width)};
      const memory::desc src_md(src_dims, DataType::f32, Tag::nhwc);
      const memory::desc weights_md(weights_dims, DataType::f32, Tag::hwio);
      const memory::desc bias_md({o}, DataType::f32, Tag::a);
      const memory::desc dst_md(dst_dims, DataType::f32, Tag::nhwc);
      const memory::desc src_any(src_dims, DataType::f32, Tag::any);
      const memory::desc weights_any(weights_dims, DataType::f32, Tag::any);
      const memory::desc dst_any(dst_dims, DataType::f32, Tag::any);
      const memory::dims strides = {config_.stride, config_.stride};
      const memory::dims padding = {config_.padding, config_.padding};
      const dnnl::convolution_forward::primitive_desc forward_pd(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                          dnnl::algorithm::convolution_direct, src_any, weights_any,
                                          bias_md, dst_any, strides, padding, padding),
          engine);
      const dnnl::convolution_backward_data::primitive_desc backward_data_pd(
          dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, src_any,
                                                weights_any, dst_any, strides, padding, padding),
          engine, forward_pd);
      const dnnl::convolution_backward_weights::primitive_desc backward_weights_pd(
          dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, src_any,
                                                   weights_any, bias_md, dst_any, strides, padding,
                                                   padding),
          engine, forward_pd);
      p.implementation =
          absl::StrCat(forward_pd.impl_info_str(), " / ", backward_data_pd.impl_info_str(), " / ",
                       backward_weights_pd.impl_info_str());
      p.forward = dnnl::convolution_forward(forward_pd);
      p.backward_data = dnnl::convolution_backward_data(backward_data_pd);
      p.backward_weights = dnnl::convolution_backward_weights(backward_weights_pd);
      Stage(src_md, forward_pd.src_desc(), engine, true, &p.src);
      Stage(weights_md, forward_pd.weights_desc(), engine, true, &p.weights);
      Stage(dst_md, forward_pd.dst_desc(), engine, false, &p.dst);
      Stage(weights_md, backward_data_pd.weights_desc(), engine, true, &p.bwd_data_weights);
      Stage(dst_md, backward_data_pd.diff_dst_desc(), engine, true, &p.bwd_data_diff_dst);
      Stage(src_md, backward_data_pd.diff_src_desc(), engine, false, &p.diff_src);
      Stage(src_md, backward_weights_pd.src_desc(), engine, true, &p.bwd_weights_src);
      Stage(dst_md, backward_weights_pd.diff_dst_desc(), engine, true, &p.bwd_weights_diff_dst);
      Stage(weights_md, backward_weights_pd.diff_weights_desc(), engine, false, &p.diff_weights);
      p.bias = memory(bias_md, engine, DNNL_MEMORY_NONE);
      p.diff_bias = memory(bias_md, engine, DNNL_MEMORY_NONE);
    });
    if (!status.ok()) return status;
    return p;
  });
}

std::string Convolution::Implementation(int64_t batch, int64_t height, int64_t width) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch, height, width);
  return found.ok() ? (*found)->implementation : "";
}

absl::Status Convolution::Forward(int64_t batch, int64_t height, int64_t width, const float* x,
                                  const float* w, const float* b, float* y) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch, height, width);
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  dnnl::stream& stream = context_->stream();
  return CallDnnl("convolution forward", [&] {
    StageIn(p.src, x, stream);
    StageIn(p.weights, w, stream);
    p.bias.set_data_handle(const_cast<float*>(b));
    p.dst.user.set_data_handle(y);
    p.forward.execute(stream, {{DNNL_ARG_SRC, p.src.internal},
                               {DNNL_ARG_WEIGHTS, p.weights.internal},
                               {DNNL_ARG_BIAS, p.bias},
                               {DNNL_ARG_DST, p.dst.internal}});
    StageOut(p.dst, stream);
    stream.wait();
  });
}

absl::Status Convolution::Backward(int64_t batch, int64_t height, int64_t width, const float* x,
                                   const float* w, const float* dy, float* dx, float* dw,
                                   float* db) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch, height, width);
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  dnnl::stream& stream = context_->stream();
  return CallDnnl("convolution backward", [&] {
    if (dx != nullptr) {
      StageIn(p.bwd_data_weights, w, stream);
      StageIn(p.bwd_data_diff_dst, dy, stream);
      p.diff_src.user.set_data_handle(dx);
      p.backward_data.execute(stream, {{DNNL_ARG_DIFF_DST, p.bwd_data_diff_dst.internal},
                                       {DNNL_ARG_WEIGHTS, p.bwd_data_weights.internal},
                                       {DNNL_ARG_DIFF_SRC, p.diff_src.internal}});
      StageOut(p.diff_src, stream);
    }
    StageIn(p.bwd_weights_src, x, stream);
    StageIn(p.bwd_weights_diff_dst, dy, stream);
    p.diff_weights.user.set_data_handle(dw);
    p.diff_bias.set_data_handle(db);
    p.backward_weights.execute(stream, {{DNNL_ARG_SRC, p.bwd_weights_src.internal},
                                        {DNNL_ARG_DIFF_DST, p.bwd_weights_diff_dst.internal},
                                        {DNNL_ARG_DIFF_WEIGHTS, p.diff_weights.internal},
                                        {DNNL_ARG_DIFF_BIAS, p.diff_bias}});
    StageOut(p.diff_weights, stream);
    stream.wait();
  });
}

}  // namespace pstrain
