#include "common/model/onnx/onnx_model.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/model/builtin/dense_input.h"
#include "common/model/layers/embedding_lookup.h"
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

// Whether the data gives what the graph's input takes: features of its
// width, or one id per field for as many fields, each with a row in every
// table.
absl::Status CheckInput(const OnnxModelSpec& spec, const OnnxProgram& program,
                        const DatasetInfo& info) {
  const std::string input = absl::StrCat(spec.path(), ": input ", program.input_name(), " takes ");
  if (!program.input_is_ids()) {
    if (info.dense_dim == 0 && info.sparse_dim > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(input,
                       "float features; the training data has only sparse ids (a graph over ids "
                       "takes int64 [batch, fields])"));
    }
    if (info.dense_dim > 0 && program.input_width() != info.dense_dim) {
      return absl::InvalidArgumentError(absl::StrCat(input, program.input_width(),
                                                     " features per example; the training data "
                                                     "has ",
                                                     info.dense_dim));
    }
    return absl::OkStatus();
  }
  if (info.sparse_dim == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(input, "int64 ids; the training data has no sparse ids"));
  }
  if (info.num_fields != program.input_width()) {
    return absl::InvalidArgumentError(absl::StrCat(
        input, program.input_width(), " ids per example (one per field); the training data has ",
        info.num_fields == 0 ? "a varying number" : absl::StrCat(info.num_fields)));
  }
  for (const OnnxInitializer& table : program.initializers()) {
    if (table.embedding_table && table.dims[0] < info.sparse_dim) {
      return absl::InvalidArgumentError(
          absl::StrCat(spec.path(), ": embedding table ", table.name, " has ", table.dims[0],
                       " rows; the training data's ids go up to ", info.sparse_dim - 1));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<OnnxModel>> OnnxModel::Create(const OnnxModelSpec& spec,
                                                             const DatasetInfo& info,
                                                             const ModelContext& context) {
  ASSIGN_OR_RETURN(std::unique_ptr<OnnxProgram> program,
                   OnnxProgram::Load(spec.path(), spec.output()));
  RETURN_IF_ERROR(CheckInput(spec, *program, info));
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
    def.spec.set_kind(init.embedding_table ? VARIABLE_KIND_EMBEDDING : VARIABLE_KIND_DENSE);
    def.spec.set_dtype(DATA_TYPE_FLOAT32);
    for (int64_t d : init.dims) def.spec.mutable_shape()->add_dims(d);
    if (init.embedding_table) {
      def.spec.mutable_embedding()->set_vocabulary_size(init.dims[0]);
      def.spec.mutable_embedding()->set_dim(static_cast<int32_t>(init.dims[1]));
    }
    InitializerSpec* initializer = def.spec.mutable_initializer();
    initializer->set_kind(INITIALIZER_KIND_ONNX_TENSOR);
    initializer->set_onnx_path(path_);
    initializer->set_onnx_tensor(init.name);
    defs.push_back(std::move(def));
  }
  return defs;
}

absl::Status OnnxModel::CheckIds(const ExampleBatch& batch) const {
  if (batch.size < 1) return absl::InvalidArgumentError("empty batch");
  if (static_cast<int64_t>(batch.row_splits.size()) != batch.size + 1) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": input ", program_->input_name(),
                                                   " takes ids; the batch has no sparse ids"));
  }
  const int64_t fields = program_->input_width();
  for (int64_t i = 0; i < batch.size; ++i) {
    if (batch.row_splits[i + 1] - batch.row_splits[i] != fields) {
      return absl::InvalidArgumentError(
          absl::StrCat("example ", i, " has ", batch.row_splits[i + 1] - batch.row_splits[i],
                       " ids; ", path_, " takes one per field, ", fields));
    }
  }
  for (const OnnxInitializer& table : program_->initializers()) {
    if (!table.embedding_table) continue;
    for (int64_t id : batch.sparse_ids) {
      if (id < 0 || id >= table.dims[0]) {
        return absl::InvalidArgumentError(absl::StrCat("id ", id, " outside embedding table ",
                                                       table.name, "'s rows [0, ", table.dims[0],
                                                       ")"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RowIds> OnnxModel::RowsToRead(const ExampleBatch& batch) const {
  RowIds rows;
  if (!program_->input_is_ids()) return rows;
  RETURN_IF_ERROR(CheckIds(batch));
  const std::vector<int64_t> ids = EmbeddingLookup::UniqueIds(batch.sparse_ids);
  for (const OnnxInitializer& table : program_->initializers()) {
    if (table.embedding_table) rows[table.name] = ids;
  }
  return rows;
}

absl::Status OnnxModel::Forward(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelMode mode, ModelOutput* output) {
  const uint64_t seed = seed_ ^ (0x9e3779b97f4a7c15ull * ++passes_);
  const float* logits = nullptr;
  if (program_->input_is_ids()) {
    RETURN_IF_ERROR(CheckIds(batch));
    ASSIGN_OR_RETURN(logits,
                     program_->Forward(parameters, batch.size, batch.sparse_ids, mode, seed));
  } else {
    ASSIGN_OR_RETURN(const float* input, DenseInput(batch, program_->input_width()));
    ASSIGN_OR_RETURN(logits, program_->Forward(parameters, batch.size, input, mode, seed));
  }
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
  const std::string input = program_->input_is_ids()
                                ? graph.SparseInput(program_->input_width()).ids
                                : graph.DenseInput(program_->input_width());
  head_.DescribeOnnx(graph, program_->Describe(graph, input));
  return absl::OkStatus();
}

}  // namespace pstrain
