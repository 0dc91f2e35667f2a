#include "common/model/layers/inner_product.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/model/dnnl/dnnl_status.h"

namespace pstrain {
namespace {

using dnnl::memory;
using Tag = dnnl::memory::format_tag;
using DataType = dnnl::memory::data_type;

}  // namespace

InnerProduct::InnerProduct(ComputeContext* context, int64_t input_dim, int64_t output_dim)
    : context_(context),
      input_dim_(input_dim),
      output_dim_(output_dim),
      zero_bias_(static_cast<size_t>(output_dim), 0.0f) {}

absl::StatusOr<InnerProduct::Primitives*> InnerProduct::GetPrimitives(int64_t batch) {
  if (batch < 1) return absl::InvalidArgumentError(absl::StrCat("batch must be >= 1, got ", batch));
  return cache_.GetOrBuild({batch}, [&]() -> absl::StatusOr<Primitives> {
    Primitives p;
    const dnnl::engine& engine = context_->engine();
    absl::Status status = CallDnnl("inner product setup", [&] {
      const memory::desc src_md({batch, input_dim_}, DataType::f32, Tag::nc);
      // oneDNN dims weights as {out, in}; tag io lays them out as [in][out].
      const memory::desc weights_md({output_dim_, input_dim_}, DataType::f32, Tag::io);
      const memory::desc bias_md({output_dim_}, DataType::f32, Tag::a);
      const memory::desc dst_md({batch, output_dim_}, DataType::f32, Tag::nc);
      const dnnl::inner_product_forward::primitive_desc forward_pd(
          dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, src_md, weights_md,
                                            bias_md, dst_md),
          engine);
      const dnnl::inner_product_backward_data::primitive_desc backward_data_pd(
          dnnl::inner_product_backward_data::desc(src_md, weights_md, dst_md), engine, forward_pd);
      const dnnl::inner_product_backward_weights::primitive_desc backward_weights_pd(
          dnnl::inner_product_backward_weights::desc(src_md, weights_md, bias_md, dst_md), engine,
          forward_pd);
      const dnnl::inner_product_backward_weights::primitive_desc backward_weights_no_bias_pd(
          dnnl::inner_product_backward_weights::desc(src_md, weights_md, dst_md), engine,
          forward_pd);
      p.forward = dnnl::inner_product_forward(forward_pd);
      p.backward_data = dnnl::inner_product_backward_data(backward_data_pd);
      p.backward_weights = dnnl::inner_product_backward_weights(backward_weights_pd);
      p.backward_weights_no_bias =
          dnnl::inner_product_backward_weights(backward_weights_no_bias_pd);
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

absl::Status InnerProduct::Forward(int64_t batch, const float* x, const float* w, const float* b,
                                   float* y) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch);
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  return CallDnnl("inner product forward", [&] {
    p.src.set_data_handle(const_cast<float*>(x));
    p.weights.set_data_handle(const_cast<float*>(w));
    p.bias.set_data_handle(const_cast<float*>(b != nullptr ? b : zero_bias_.data()));
    p.dst.set_data_handle(y);
    p.forward.execute(context_->stream(), {{DNNL_ARG_SRC, p.src},
                                           {DNNL_ARG_WEIGHTS, p.weights},
                                           {DNNL_ARG_BIAS, p.bias},
                                           {DNNL_ARG_DST, p.dst}});
    context_->stream().wait();
  });
}

absl::Status InnerProduct::Backward(int64_t batch, const float* x, const float* w, const float* dy,
                                    float* dx, float* dw, float* db) {
  absl::StatusOr<Primitives*> found = GetPrimitives(batch);
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  return CallDnnl("inner product backward", [&] {
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
    if (db != nullptr) {
      p.diff_bias.set_data_handle(db);
      p.backward_weights.execute(context_->stream(), {{DNNL_ARG_SRC, p.src},
                                                      {DNNL_ARG_DIFF_DST, p.diff_dst},
                                                      {DNNL_ARG_DIFF_WEIGHTS, p.diff_weights},
                                                      {DNNL_ARG_DIFF_BIAS, p.diff_bias}});
    } else {
      p.backward_weights_no_bias.execute(context_->stream(),
                                         {{DNNL_ARG_SRC, p.src},
                                          {DNNL_ARG_DIFF_DST, p.diff_dst},
                                          {DNNL_ARG_DIFF_WEIGHTS, p.diff_weights}});
    }
    context_->stream().wait();
  });
}

}  // namespace pstrain
