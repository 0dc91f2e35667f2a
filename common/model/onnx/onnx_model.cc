#include "common/model/onnx/onnx_model.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/model/builtin/dense_input.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// The loss the spec names, or the default for an output of `width`.
absl::StatusOr<PredictionKind> KindOf(const OnnxModelSpec& spec, int64_t width) {
  switch (spec.loss()) {
    case ONNX_LOSS_UNSPECIFIED:
      return width >= 2 ? PredictionKind::kClassProbabilities : PredictionKind::kBinaryProbability;
    case ONNX_LOSS_SOFTMAX_CROSS_ENTROPY:
      if (width < 2) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model.onnx.loss softmax cross-entropy needs an output of 2 or more class scores; ",
            spec.path(), " gives ", width, " per example"));
      }
      return PredictionKind::kClassProbabilities;
    case ONNX_LOSS_SIGMOID_CROSS_ENTROPY:
    case ONNX_LOSS_MEAN_SQUARED_ERROR:
      if (width != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("model.onnx.loss ", OnnxLoss_Name(spec.loss()),
                         " needs one output value per example; ", spec.path(), " gives ", width));
      }
      return spec.loss() == ONNX_LOSS_MEAN_SQUARED_ERROR ? PredictionKind::kRegression
                                                         : PredictionKind::kBinaryProbability;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("model.onnx.loss ", static_cast<int>(spec.loss()), " is unknown"));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<OnnxModel>> OnnxModel::Create(const OnnxModelSpec& spec,
                                                             const DatasetInfo& info,
                                                             const ModelContext& context) {
  ASSIGN_OR_RETURN(std::unique_ptr<OnnxProgram> program,
                   OnnxProgram::Load(spec.path(), spec.output()));
  if (info.dense_dim > 0 && program->input_width() != info.dense_dim) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec.path(), ": input ", program->input_name(), " takes ", program->input_width(),
        " features per example; the training data has ", info.dense_dim));
  }
  ASSIGN_OR_RETURN(const PredictionKind kind, KindOf(spec, program->output_width()));
  return std::unique_ptr<OnnxModel>(new OnnxModel(spec.path(), std::move(program), kind, context));
}

OnnxModel::OnnxModel(std::string path, std::unique_ptr<OnnxProgram> program, PredictionKind kind,
                     const ModelContext& context)
    : path_(std::move(path)),
      program_(std::move(program)),
      head_(context.compute, kind, program_->output_width()),
      seed_(context.seed) {}

std::vector<VariableDef> OnnxModel::Variables() const {
  std::vector<VariableDef> defs;
  for (const OnnxInitializer& init : program_->initializers()) {
    VariableDef def;
    def.spec.set_name(init.name);
    def.spec.set_kind(VARIABLE_KIND_DENSE);
    def.spec.set_dtype(DATA_TYPE_FLOAT32);
    for (int64_t d : init.dims) def.spec.mutable_shape()->add_dims(d);
    InitializerSpec* initializer = def.spec.mutable_initializer();
    initializer->set_kind(INITIALIZER_KIND_ONNX_TENSOR);
    initializer->set_onnx_path(path_);
    initializer->set_onnx_tensor(init.name);
    defs.push_back(std::move(def));
  }
  return defs;
}

absl::Status OnnxModel::Forward(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelMode mode, ModelOutput* output) {
  ASSIGN_OR_RETURN(const float* input, DenseInput(batch, program_->input_width()));
  const uint64_t seed = seed_ ^ (0x9e3779b97f4a7c15ull * ++passes_);
  ASSIGN_OR_RETURN(const float* logits,
                   program_->Forward(parameters, batch.size, input, mode, seed));
  return head_.Forward(batch.size, logits, batch.labels, output);
}

absl::Status OnnxModel::ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                         ModelOutput* output, Gradients* gradients) {
  RETURN_IF_ERROR(Forward(parameters, batch, ModelMode::kTrain, output));
  d_output_.resize(batch.size * head_.width());
  RETURN_IF_ERROR(head_.Backward(batch.size, *output, batch.labels, d_output_.data()));
  return program_->Backward(parameters, d_output_.data(), gradients);
}

absl::Status OnnxModel::DescribeOnnx(OnnxGraph& graph) const {
  head_.DescribeOnnx(graph, program_->Describe(graph, graph.DenseInput(program_->input_width())));
  return absl::OkStatus();
}

}  // namespace pstrain
