#include "common/model/layers/softmax_cross_entropy.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/model/dnnl/dnnl_status.h"

namespace pstrain {

SoftmaxCrossEntropy::SoftmaxCrossEntropy(ComputeContext* context, int64_t num_classes)
    : context_(context), num_classes_(num_classes) {}

absl::Status SoftmaxCrossEntropy::CheckLabels(int64_t batch, const float* labels) const {
  if (batch < 1) return absl::InvalidArgumentError(absl::StrCat("batch must be >= 1, got ", batch));
  for (int64_t i = 0; i < batch; ++i) {
    const float label = labels[i];
    if (!(label >= 0 && label < num_classes_) || label != std::floor(label)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "example ", i, " has label ", label, ", not a class id in [0, ", num_classes_, ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<double> SoftmaxCrossEntropy::Forward(int64_t batch, const float* logits,
                                                    const float* labels, float* probabilities,
                                                    float* losses) {
  absl::Status status = CheckLabels(batch, labels);
  if (!status.ok()) return status;
  absl::StatusOr<Primitives*> found =
      cache_.GetOrBuild({batch}, [&]() -> absl::StatusOr<Primitives> {
        Primitives p;
        absl::Status setup = CallDnnl("log-softmax setup", [&] {
          const dnnl::memory::desc md({batch, num_classes_}, dnnl::memory::data_type::f32,
                                      dnnl::memory::format_tag::nc);
          const dnnl::logsoftmax_forward::primitive_desc pd(
              dnnl::logsoftmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1),
              context_->engine());
          p.forward = dnnl::logsoftmax_forward(pd);
          p.src = dnnl::memory(md, context_->engine(), DNNL_MEMORY_NONE);
          p.dst = dnnl::memory(md, context_->engine(), DNNL_MEMORY_NONE);
        });
        if (!setup.ok()) return setup;
        return p;
      });
  if (!found.ok()) return found.status();
  Primitives& p = **found;
  // The log-probabilities land in `probabilities` and are exponentiated in
  // place below.
  status = CallDnnl("log-softmax forward", [&] {
    p.src.set_data_handle(const_cast<float*>(logits));
    p.dst.set_data_handle(probabilities);
    p.forward.execute(context_->stream(), {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_DST, p.dst}});
    context_->stream().wait();
  });
  if (!status.ok()) return status;
  double total = 0;
  for (int64_t i = 0; i < batch; ++i) {
    float* row = probabilities + i * num_classes_;
    const float loss = -row[static_cast<int64_t>(labels[i])];
    if (losses != nullptr) losses[i] = loss;
    total += loss;
    for (int64_t c = 0; c < num_classes_; ++c) row[c] = std::exp(row[c]);
  }
  return total / batch;
}

absl::Status SoftmaxCrossEntropy::Backward(int64_t batch, const float* probabilities,
                                           const float* labels, float* dlogits) const {
  absl::Status status = CheckLabels(batch, labels);
  if (!status.ok()) return status;
  const float scale = 1.0f / static_cast<float>(batch);
  for (int64_t i = 0; i < batch; ++i) {
    const float* p = probabilities + i * num_classes_;
    float* d = dlogits + i * num_classes_;
    for (int64_t c = 0; c < num_classes_; ++c) d[c] = p[c] * scale;
    d[static_cast<int64_t>(labels[i])] -= scale;
  }
  return absl::OkStatus();
}

}  // namespace pstrain
