#include "common/model/builtin/linear_model.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/model/builtin/dense_input.h"
#include "common/model/layers/onnx_layers.h"

namespace pstrain {
namespace {

constexpr char kWeights[] = "linear/weights";
constexpr char kBias[] = "linear/bias";

int64_t WidthOf(const LinearModelOptions& options) {
  return options.kind == PredictionKind::kClassProbabilities ? options.num_classes : 1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LinearModel>> LinearModel::Create(const LinearModelOptions& options,
                                                                 const ModelContext& context) {
  if (options.input_dim <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input_dim must be > 0, got ", options.input_dim));
  }
  if (options.kind == PredictionKind::kClassProbabilities && options.num_classes < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_classes must be >= 2, got ", options.num_classes));
  }
  return std::unique_ptr<LinearModel>(new LinearModel(options, context));
}

LinearModel::LinearModel(const LinearModelOptions& options, const ModelContext& context)
    : options_(options),
      seed_(context.seed),
      head_(context.compute, options.kind, options.num_classes) {
  if (options.sparse_input) {
    lookup_ = std::make_unique<EmbeddingLookup>(WidthOf(options), EmbeddingCombiner::kSum);
  } else {
    model_internal::DenseStackConfig config;
    config.input_dim = options.input_dim;
    config.output_dim = WidthOf(options);
    config.output_name = "linear";
    dense_ = std::make_unique<model_internal::DenseStack>(context.compute, config, context.seed);
  }
}

std::string LinearModel::name() const {
  return options_.kind == PredictionKind::kRegression ? "linear_regression" : "logistic_regression";
}

std::vector<VariableDef> LinearModel::Variables() const {
  if (dense_ != nullptr) return dense_->Variables();
  std::vector<VariableDef> defs(2);
  VariableSpec& weights = defs[0].spec;
  weights.set_name(kWeights);
  weights.set_kind(VARIABLE_KIND_EMBEDDING);
  weights.set_dtype(DATA_TYPE_FLOAT32);
  weights.mutable_shape()->add_dims(options_.input_dim);
  weights.mutable_shape()->add_dims(WidthOf(options_));
  // Zeros: a sparse linear model is convex, and zero rows cost nothing to
  // create on demand.
  weights.mutable_initializer()->set_kind(INITIALIZER_KIND_ZEROS);
  weights.mutable_embedding()->set_vocabulary_size(options_.input_dim);
  weights.mutable_embedding()->set_dim(static_cast<int32_t>(WidthOf(options_)));
  weights.mutable_embedding()->set_combiner(COMBINER_SUM);
  VariableSpec& bias = defs[1].spec;
  bias.set_name(kBias);
  bias.set_kind(VARIABLE_KIND_DENSE);
  bias.set_dtype(DATA_TYPE_FLOAT32);
  bias.mutable_shape()->add_dims(WidthOf(options_));
  bias.mutable_initializer()->set_kind(INITIALIZER_KIND_ZEROS);
  bias.mutable_initializer()->set_seed(seed_);
  weights.mutable_initializer()->set_seed(seed_);
  return defs;
}

absl::StatusOr<RowIds> LinearModel::RowsToRead(const ExampleBatch& batch) const {
  RowIds ids;
  if (lookup_ == nullptr) return ids;
  if (!batch.has_sparse()) {
    return absl::InvalidArgumentError("the model reads sparse features; the batch has none");
  }
  for (int64_t id : batch.sparse_ids) {
    if (id < 0 || id >= options_.input_dim) {
      return absl::InvalidArgumentError(
          absl::StrCat("feature id ", id, " outside [0, ", options_.input_dim, ")"));
    }
  }
  ids[kWeights] = EmbeddingLookup::UniqueIds(batch.sparse_ids);
  return ids;
}

absl::Status LinearModel::SparseForward(const ParameterView& parameters,
                                        const ExampleBatch& batch) {
  if (batch.size < 1) return absl::InvalidArgumentError("empty batch");
  if (static_cast<int64_t>(batch.row_splits.size()) != batch.size + 1) {
    return absl::InvalidArgumentError("the model reads sparse features; the batch has none");
  }
  const int64_t width = WidthOf(options_);
  absl::StatusOr<const EmbeddingRows*> rows = parameters.Rows(kWeights, width);
  if (!rows.ok()) return rows.status();
  absl::StatusOr<const float*> bias = parameters.Dense(kBias, Shape({width}));
  if (!bias.ok()) return bias.status();
  logits_.resize(batch.size * width);
  absl::Status status = lookup_->Forward(batch.row_splits, batch.sparse_ids, batch.sparse_values,
                                         **rows, logits_.data());
  if (!status.ok()) return status;
  for (int64_t i = 0; i < batch.size; ++i) {
    for (int64_t k = 0; k < width; ++k) logits_[i * width + k] += (*bias)[k];
  }
  return absl::OkStatus();
}

absl::Status LinearModel::Forward(const ParameterView& parameters, const ExampleBatch& batch,
                                  PassMode mode, ModelOutput* output) {
  const float* logits = nullptr;
  if (lookup_ != nullptr) {
    absl::Status status = SparseForward(parameters, batch);
    if (!status.ok()) return status;
    logits = logits_.data();
  } else {
    absl::StatusOr<const float*> input = DenseInput(batch, options_.input_dim);
    if (!input.ok()) return input.status();
    absl::Status status = dense_->Forward(parameters, batch.size, *input, mode, &logits);
    if (!status.ok()) return status;
  }
  return head_.Forward(batch.size, logits, batch.labels, output);
}

absl::Status LinearModel::DescribeOnnx(OnnxGraph& graph) const {
  std::string logits;
  if (dense_ != nullptr) {
    logits = dense_->DescribeOnnx(graph, graph.DenseInput(options_.input_dim));
  } else {
    const std::string sum =
        OnnxEmbeddingBags(graph, kWeights, graph.SparseInput(0), EmbeddingCombiner::kSum);
    logits = graph.Node("Add", {sum, graph.Variable(kBias)});
  }
  head_.DescribeOnnx(graph, logits);
  return absl::OkStatus();
}

absl::Status LinearModel::ComputeGradients(const ParameterView& parameters,
                                           const ExampleBatch& batch, ModelOutput* output,
                                           Gradients* gradients) {
  absl::Status status = Forward(parameters, batch, PassMode::kTrain, output);
  if (!status.ok()) return status;
  const int64_t width = WidthOf(options_);
  dlogits_.resize(batch.size * width);
  status = head_.Backward(batch.size, *output, batch.labels, dlogits_.data());
  if (!status.ok()) return status;
  if (dense_ != nullptr) {
    return dense_->Backward(parameters, batch.size, batch.dense.data<float>(), dlogits_.data(),
                            /*d_input=*/nullptr, gradients);
  }
  absl::StatusOr<const EmbeddingRows*> rows = parameters.Rows(kWeights, width);
  if (!rows.ok()) return rows.status();
  absl::StatusOr<float*> d_rows = gradients->RowsBuffer(kWeights, (*rows)->ids, width);
  if (!d_rows.ok()) return d_rows.status();
  status = lookup_->Backward(dlogits_.data(), *d_rows);
  if (!status.ok()) return status;
  absl::StatusOr<float*> d_bias = gradients->DenseBuffer(kBias, Shape({width}));
  if (!d_bias.ok()) return d_bias.status();
  std::fill_n(*d_bias, width, 0.0f);
  for (int64_t i = 0; i < batch.size; ++i) {
    for (int64_t k = 0; k < width; ++k) (*d_bias)[k] += dlogits_[i * width + k];
  }
  return absl::OkStatus();
}

}  // namespace pstrain
