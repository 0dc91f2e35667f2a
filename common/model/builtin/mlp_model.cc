#include "common/model/builtin/mlp_model.h"

#include "absl/strings/str_cat.h"
#include "common/model/builtin/dense_input.h"

namespace pstrain {

absl::StatusOr<std::unique_ptr<MlpModel>> MlpModel::Create(const MlpSpec& spec,
                                                           const ModelContext& context) {
  model_internal::DenseStackConfig config;
  config.input_dim = spec.input_dim();
  config.hidden_units.assign(spec.hidden_units().begin(), spec.hidden_units().end());
  absl::StatusOr<ActivationKind> activation = ActivationFromSpec(spec.activation());
  if (!activation.ok()) return activation.status();
  config.activation = *activation;
  config.dropout = spec.dropout();
  const PredictionKind kind =
      spec.regression() ? PredictionKind::kRegression : PredictionKind::kClassProbabilities;
  config.output_dim = spec.regression() ? 1 : spec.num_classes();
  return std::unique_ptr<MlpModel>(new MlpModel(config, kind, context));
}

MlpModel::MlpModel(const model_internal::DenseStackConfig& config, PredictionKind kind,
                   const ModelContext& context)
    : kind_(kind),
      stack_(context.compute, config, context.seed),
      head_(context.compute, kind, config.output_dim) {}

absl::Status MlpModel::Forward(const ParameterView& parameters, const ExampleBatch& batch,
                               PassMode mode, ModelOutput* output) {
  absl::StatusOr<const float*> input = DenseInput(batch, stack_.config().input_dim);
  if (!input.ok()) return input.status();
  const float* logits = nullptr;
  absl::Status status = stack_.Forward(parameters, batch.size, *input, mode, &logits);
  if (!status.ok()) return status;
  return head_.Forward(batch.size, logits, batch.labels, output);
}

absl::Status MlpModel::DescribeOnnx(OnnxGraph& graph) const {
  const std::string input = graph.DenseInput(stack_.config().input_dim);
  head_.DescribeOnnx(graph, stack_.DescribeOnnx(graph, input));
  return absl::OkStatus();
}

absl::Status MlpModel::ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                        ModelOutput* output, Gradients* gradients) {
  absl::Status status = Forward(parameters, batch, PassMode::kTrain, output);
  if (!status.ok()) return status;
  dlogits_.resize(batch.size * head_.width());
  status = head_.Backward(batch.size, *output, batch.labels, dlogits_.data());
  if (!status.ok()) return status;
  return stack_.Backward(parameters, batch.size, batch.dense.data<float>(), dlogits_.data(),
                         /*d_input=*/nullptr, gradients);
}

}  // namespace pstrain
