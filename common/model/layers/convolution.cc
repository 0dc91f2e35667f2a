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
      const memory::desc src_md({batch, c, height, width}, DataType::f32, Tag::nhwc);
      const memory::desc weights_md({o, c, k, k}, DataType::f32, Tag::hwio);
      const memory::desc bias_md({o}, DataType::f32, Tag::a);
      const memory::desc dst_md({batch, o, OutputHeight(height), OutputWidth(width)}, DataType::f32,
                                Tag::nhwc);
      const memory::dims strides = {config_.stride, config_.stride};
      const memory::dims padding = {config_.padding, config_.padding};
      const dnnl::convolution_forward::primitive_desc forward_pd(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                          dnnl::algorithm::convolution_direct, src_md, weights_md,
                                          bias_md, dst_md, strides, padding, padding),
          engine);
      const dnnl::convolution_backward_data::primitive_desc backward_data_pd(
          dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, src_md,
                                                weights_md, dst_md, strides, padding, padding),
          engine, forward_pd);
      const dnnl::convolution_backward_weights::primitive_desc backward_weights_pd(
          dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, src_md,
                                                   weights_md, bias_md, dst_md, strides, padding,
                                                   padding),
          engine, forward_pd);
      p.implementation = forward_pd.impl_info_str();
      p.forward = dnnl::convolution_forward(forward_pd);
      p.backward_data = dnnl::convolution_backward_data(backward_data_pd);
      p.backward_weights = dnnl::convolution_backward_weights(backward_weights_pd);
      p.src = memory(src_md, engine, DNNL_MEMORY_NONE);
      p.weights = memory(weights_md, engine, DNNL_MEMORY_NONE);
      p.bias = memory(bias_md, engine, DNNL_MEMORY_NONE);
      p.dst = memory(dst_md, engine, DNNL_MEMORY_NONE);
      p.diff_src = memory(src_md, engine, DNNL_MEMORY_NONE);
      p.diff_weights = memory(weights_md, engine, DNNL_MEMORY_NONE);
      p.diff_bias = memory(bias_md, engine, DNNL_MEMORY_NONE);
      p.diff_dst = memory(dst_md, engine, DNNL_MEMORY_NONE);
    });
    if (!status.ok()) return status;
    return p;
  });
}

std::string Convolution::ForwardImplementation(int64_t batch, int64_t height, int64_t width) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch, height, width);
  return found.ok() ? (*found)->implementation : "";
}

absl::Status Convolution::Forward(int64_t batch, int64_t height, int64_t width, const float* x,
                                  const float* w, const float* b, float* y) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch, height, width);
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  return CallDnnl("convolution forward", [&] {
    p.src.set_data_handle(const_cast<float*>(x));
    p.weights.set_data_handle(const_cast<float*>(w));
    p.bias.set_data_handle(const_cast<float*>(b));
    p.dst.set_data_handle(y);
    p.forward.execute(context_->stream(), {{DNNL_ARG_SRC, p.src},
                                           {DNNL_ARG_WEIGHTS, p.weights},
                                           {DNNL_ARG_BIAS, p.bias},
                                           {DNNL_ARG_DST, p.dst}});
    context_->stream().wait();
  });
}

absl::Status Convolution::Backward(int64_t batch, int64_t height, int64_t width, const float* x,
                                   const float* w, const float* dy, float* dx, float* dw,
                                   float* db) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch, height, width);
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  return CallDnnl("convolution backward", [&] {
    p.diff_dst.set_data_handle(const_cast<float*>(dy));
    if (dx != nullptr) {
      p.weights.set_data_handle(const_cast<float*>(w));
      p.diff_src.set_data_handle(dx);
      p.backward_data.execute(context_->stream(), {{DNNL_ARG_DIFF_DST, p.diff_dst},
                                                   {DNNL_ARG_WEIGHTS, p.weights},
                                                   {DNNL_ARG_DIFF_SRC, p.diff_src}});
    }
    p.src.set_data_handle(const_cast<float*>(x));
    p.diff_weights.set_data_handle(dw);
    p.diff_bias.set_data_handle(db);
    p.backward_weights.execute(context_->stream(), {{DNNL_ARG_SRC, p.src},
                                                    {DNNL_ARG_DIFF_DST, p.diff_dst},
                                                    {DNNL_ARG_DIFF_WEIGHTS, p.diff_weights},
                                                    {DNNL_ARG_DIFF_BIAS, p.diff_bias}});
    context_->stream().wait();
  });
}

}  // namespace pstrain
