#include "common/model/standardized_input_model.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace pstrain {

StandardizedInputModel::StandardizedInputModel(std::unique_ptr<Model> inner,
                                               std::vector<float> mean, std::vector<float> scale)
    : inner_(std::move(inner)), mean_(std::move(mean)), scale_(std::move(scale)) {}

absl::Status StandardizedInputModel::Standardize(const ExampleBatch& batch) {
  const int64_t width = static_cast<int64_t>(mean_.size());
  if (batch.dense_dim() != width) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model standardises ", width, " dense features; the batch has ", batch.dense_dim()));
  }
  if (standardized_.dense.shape() != batch.dense.shape()) {
    absl::StatusOr<Tensor> dense =
        Tensor::CreateUninitialized(DATA_TYPE_FLOAT32, batch.dense.shape());
    if (!dense.ok()) return dense.status();
    standardized_.dense = *std::move(dense);
  }
  const float* in = batch.dense.data<float>();
  float* out = standardized_.dense.data<float>();
  for (int64_t i = 0; i < batch.size; ++i) {
    for (int64_t j = 0; j < width; ++j) {
      out[i * width + j] = (in[i * width + j] - mean_[j]) * scale_[j];
    }
  }
  standardized_.size = batch.size;
  standardized_.sparse_ids = batch.sparse_ids;
  standardized_.sparse_values = batch.sparse_values;
  standardized_.row_splits = batch.row_splits;
  standardized_.labels = batch.labels;
  standardized_.epoch = batch.epoch;
  return absl::OkStatus();
}

absl::Status StandardizedInputModel::Forward(const ParameterView& parameters,
                                             const ExampleBatch& batch, PassMode mode,
                                             ModelOutput* output) {
  absl::Status status = Standardize(batch);
  if (!status.ok()) return status;
  return inner_->Forward(parameters, standardized_, mode, output);
}

absl::Status StandardizedInputModel::ComputeGradients(const ParameterView& parameters,
                                                      const ExampleBatch& batch,
                                                      ModelOutput* output, Gradients* gradients) {
  absl::Status status = Standardize(batch);
  if (!status.ok()) return status;
  return inner_->ComputeGradients(parameters, standardized_, output, gradients);
}

}  // namespace pstrain
