#include "common/model/layers/activation_layer.h"

#include "absl/strings/str_cat.h"
#include "common/model/dnnl/dnnl_status.h"

namespace pstrain {
namespace {

dnnl::algorithm Algorithm(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::kRelu:
      return dnnl::algorithm::eltwise_relu;
    case ActivationKind::kTanh:
      return dnnl::algorithm::eltwise_tanh;
    case ActivationKind::kSigmoid:
      return dnnl::algorithm::eltwise_logistic;
    case ActivationKind::kGelu:
      return dnnl::algorithm::eltwise_gelu_erf;
  }
  return dnnl::algorithm::eltwise_relu;
}

}  // namespace

absl::string_view ActivationName(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::kRelu:
      return "relu";
    case ActivationKind::kTanh:
      return "tanh";
    case ActivationKind::kSigmoid:
      return "sigmoid";
    case ActivationKind::kGelu:
      return "gelu";
  }
  return "unknown";
}

ActivationLayer::ActivationLayer(ComputeContext* context, ActivationKind kind)
    : context_(context), kind_(kind) {}

absl::StatusOr<ActivationLayer::Primitives*> ActivationLayer::GetPrimitives(int64_t size) {
  if (size < 1) return absl::InvalidArgumentError(absl::StrCat("size must be >= 1, got ", size));
  return cache_.GetOrBuild({size}, [&]() -> absl::StatusOr<Primitives> {
    Primitives p;
    const dnnl::engine& engine = context_->engine();
    absl::Status status = CallDnnl(absl::StrCat(ActivationName(kind_), " setup"), [&] {
      const dnnl::memory::desc md({size}, dnnl::memory::data_type::f32,
                                  dnnl::memory::format_tag::a);
      const dnnl::eltwise_forward::primitive_desc forward_pd(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, Algorithm(kind_), md),
          engine);
      const dnnl::eltwise_backward::primitive_desc backward_pd(
          dnnl::eltwise_backward::desc(Algorithm(kind_), md, md), engine, forward_pd);
      p.forward = dnnl::eltwise_forward(forward_pd);
      p.backward = dnnl::eltwise_backward(backward_pd);
      p.src = dnnl::memory(md, engine, DNNL_MEMORY_NONE);
      p.dst = dnnl::memory(md, engine, DNNL_MEMORY_NONE);
      p.diff_dst = dnnl::memory(md, engine, DNNL_MEMORY_NONE);
      p.diff_src = dnnl::memory(md, engine, DNNL_MEMORY_NONE);
    });
    if (!status.ok()) return status;
    return p;
  });
}

absl::Status ActivationLayer::Forward(int64_t size, const float* x, float* y) {
  absl::StatusOr<Primitives*> found = GetPrimitives(size);
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  return CallDnnl(absl::StrCat(ActivationName(kind_), " forward"), [&] {
    p.src.set_data_handle(const_cast<float*>(x));
    p.dst.set_data_handle(y);
    p.forward.execute(context_->stream(), {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_DST, p.dst}});
    context_->stream().wait();
  });
}

absl::Status ActivationLayer::Backward(int64_t size, const float* x, const float* dy, float* dx) {
  absl::StatusOr<Primitives*> found = GetPrimitives(size);
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  return CallDnnl(absl::StrCat(ActivationName(kind_), " backward"), [&] {
    p.src.set_data_handle(const_cast<float*>(x));
    p.diff_dst.set_data_handle(const_cast<float*>(dy));
    p.diff_src.set_data_handle(dx);
    p.backward.execute(
        context_->stream(),
        {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_DIFF_DST, p.diff_dst}, {DNNL_ARG_DIFF_SRC, p.diff_src}});
    context_->stream().wait();
  });
}

}  // namespace pstrain
