#include "common/model/builtin/wide_and_deep_model.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "common/model/builtin/dense_input.h"
#include "common/model/layers/onnx_layers.h"

namespace pstrain {
namespace {

constexpr char kWideWeights[] = "wide/weights";
constexpr char kWideBias[] = "wide/bias";
constexpr char kDeepEmbedding[] = "deep/embedding";

VariableDef Table(const std::string& name, int64_t vocabulary, int64_t dim,
                  const EmbeddingSpec& embedding, InitializerKind kind, uint64_t seed) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(VARIABLE_KIND_EMBEDDING);
  def.spec.set_dtype(DATA_TYPE_FLOAT32);
  def.spec.mutable_shape()->add_dims(vocabulary);
  def.spec.mutable_shape()->add_dims(dim);
  def.spec.mutable_initializer()->set_kind(kind);
  def.spec.mutable_initializer()->set_seed(seed);
  if (kind == INITIALIZER_KIND_UNIFORM) {
    def.spec.mutable_initializer()->set_min(-0.05f);
    def.spec.mutable_initializer()->set_max(0.05f);
  }
  *def.spec.mutable_embedding() = embedding;
  def.spec.mutable_embedding()->set_dim(static_cast<int32_t>(dim));
  return def;
}

EmbeddingCombiner DeepCombiner(const WideAndDeepSpec& spec) {
  return spec.embedding().combiner() == COMBINER_MEAN ? EmbeddingCombiner::kMean
                                                      : EmbeddingCombiner::kSum;
}

}  // namespace

absl::StatusOr<std::unique_ptr<WideAndDeepModel>> WideAndDeepModel::Create(
    const WideAndDeepSpec& spec, const ModelContext& context) {
  absl::StatusOr<ActivationKind> activation = ActivationFromSpec(spec.activation());
  if (!activation.ok()) return activation.status();
  const int64_t dim = spec.embedding().dim();
  model_internal::DenseStackConfig deep;
  deep.prefix = "deep/";
  deep.input_dim = dim * std::max(1, spec.num_fields()) + spec.dense_dim();
  deep.hidden_units.assign(spec.hidden_units().begin(), spec.hidden_units().end());
  deep.activation = *activation;
  deep.output_dim = 1;
  return std::unique_ptr<WideAndDeepModel>(new WideAndDeepModel(spec, context, dim, deep));
}

WideAndDeepModel::WideAndDeepModel(const WideAndDeepSpec& spec, const ModelContext& context,
                                   int64_t dim, const model_internal::DenseStackConfig& deep)
    : spec_(spec),
      seed_(context.seed),
      dim_(dim),
      num_fields_(spec.num_fields()),
      dense_dim_(spec.dense_dim()),
      embedded_width_(dim * std::max(1, spec.num_fields())),
      wide_lookup_(1, EmbeddingCombiner::kSum),
      deep_lookup_(dim_, DeepCombiner(spec)),
      deep_(context.compute, deep, context.seed),
      head_(context.compute, PredictionKind::kBinaryProbability, 1) {}

std::vector<VariableDef> WideAndDeepModel::Variables() const {
  const int64_t vocabulary = spec_.embedding().vocabulary_size();
  std::vector<VariableDef> defs;
  defs.push_back(
      Table(kWideWeights, vocabulary, 1, spec_.embedding(), INITIALIZER_KIND_ZEROS, seed_));
  VariableDef bias;
  bias.spec.set_name(kWideBias);
  bias.spec.set_kind(VARIABLE_KIND_DENSE);
  bias.spec.set_dtype(DATA_TYPE_FLOAT32);
  bias.spec.mutable_shape()->add_dims(1);
  bias.spec.mutable_initializer()->set_kind(INITIALIZER_KIND_ZEROS);
  defs.push_back(bias);
  defs.push_back(
      Table(kDeepEmbedding, vocabulary, dim_, spec_.embedding(), INITIALIZER_KIND_UNIFORM, seed_));
  for (VariableDef& def : deep_.Variables()) defs.push_back(std::move(def));
  return defs;
}

absl::Status WideAndDeepModel::CheckBatch(const ExampleBatch& batch) const {
  if (batch.size < 1) return absl::InvalidArgumentError("empty batch");
  if (static_cast<int64_t>(batch.row_splits.size()) != batch.size + 1) {
    return absl::InvalidArgumentError("wide_and_deep reads sparse ids; the batch has none");
  }
  const int64_t vocabulary = spec_.embedding().vocabulary_size();
  if (vocabulary > 0) {
    for (int64_t id : batch.sparse_ids) {
      if (id < 0 || id >= vocabulary) {
        return absl::InvalidArgumentError(
            absl::StrCat("id ", id, " outside the vocabulary [0, ", vocabulary, ")"));
      }
    }
  }
  if (dense_dim_ > 0) {
    absl::StatusOr<const float*> dense = DenseInput(batch, dense_dim_);
    if (!dense.ok()) {
      return absl::Status(dense.status().code(),
                          absl::StrCat("wide_and_deep's deep part reads ", dense_dim_,
                                       " dense features: ", dense.status().message()));
    }
  }
  if (num_fields_ > 0) {
    for (int64_t i = 0; i < batch.size; ++i) {
      if (batch.row_splits[i + 1] - batch.row_splits[i] != num_fields_) {
        return absl::InvalidArgumentError(
            absl::StrCat("example ", i, " has ", batch.row_splits[i + 1] - batch.row_splits[i],
                         " ids; wide_and_deep expects one per field, ", num_fields_));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RowIds> WideAndDeepModel::RowsToRead(const ExampleBatch& batch) const {
  absl::Status status = CheckBatch(batch);
  if (!status.ok()) return status;
  std::vector<int64_t> ids = EmbeddingLookup::UniqueIds(batch.sparse_ids);
  RowIds rows;
  rows[kWideWeights] = ids;
  rows[kDeepEmbedding] = std::move(ids);
  return rows;
}

absl::Status WideAndDeepModel::Forward(const ParameterView& parameters, const ExampleBatch& batch,
                                       PassMode mode, ModelOutput* output) {
  absl::Status status = CheckBatch(batch);
  if (!status.ok()) return status;
  const int64_t n = batch.size;
  absl::StatusOr<const EmbeddingRows*> wide = parameters.Rows(kWideWeights, 1);
  if (!wide.ok()) return wide.status();
  absl::StatusOr<const float*> bias = parameters.Dense(kWideBias, Shape({1}));
  if (!bias.ok()) return bias.status();
  absl::StatusOr<const EmbeddingRows*> deep = parameters.Rows(kDeepEmbedding, dim_);
  if (!deep.ok()) return deep.status();

  wide_logits_.resize(n);
  status = wide_lookup_.Forward(batch.row_splits, batch.sparse_ids, batch.sparse_values, **wide,
                                wide_logits_.data());
  if (!status.ok()) return status;

  if (num_fields_ > 0) {
    // One bag per id: its embedding lands in its field's slot of the row.
    deep_splits_.resize(batch.sparse_ids.size() + 1);
    std::iota(deep_splits_.begin(), deep_splits_.end(), 0);
  } else {
    deep_splits_ = batch.row_splits;
  }
  // Without dense features the embeddings are the deep input.
  std::vector<float>& embedded = dense_dim_ > 0 ? embedded_ : deep_input_;
  embedded.resize(n * embedded_width_);
  status = deep_lookup_.Forward(deep_splits_, batch.sparse_ids, batch.sparse_values, **deep,
                                embedded.data());
  if (!status.ok()) return status;
  if (dense_dim_ > 0) {
    const int64_t width = deep_.config().input_dim;
    const float* dense = *DenseInput(batch, dense_dim_);  // checked above
    deep_input_.resize(n * width);
    for (int64_t i = 0; i < n; ++i) {
      std::copy_n(&embedded_[i * embedded_width_], embedded_width_, &deep_input_[i * width]);
      std::copy_n(&dense[i * dense_dim_], dense_dim_, &deep_input_[i * width + embedded_width_]);
    }
  }
  const float* deep_logits = nullptr;
  status = deep_.Forward(parameters, n, deep_input_.data(), mode, &deep_logits);
  if (!status.ok()) return status;
  logits_.resize(n);
  for (int64_t i = 0; i < n; ++i) logits_[i] = wide_logits_[i] + (*bias)[0] + deep_logits[i];
  return head_.Forward(n, logits_.data(), batch.labels, output);
}

absl::Status WideAndDeepModel::DescribeOnnx(OnnxGraph& graph) const {
  const OnnxSparseInput input = graph.SparseInput(num_fields_);
  const std::string wide = OnnxEmbeddingBags(graph, kWideWeights, input, EmbeddingCombiner::kSum);
  const EmbeddingCombiner combiner = DeepCombiner(spec_);
  std::string deep_input =
      num_fields_ > 0
          ? OnnxEmbeddingPerId(graph, kDeepEmbedding, input, combiner, num_fields_, dim_)
          : OnnxEmbeddingBags(graph, kDeepEmbedding, input, combiner);
  if (dense_dim_ > 0) {
    deep_input = graph.Node("Concat", {deep_input, graph.DenseInput(dense_dim_)},
                            {OnnxAttribute::Int("axis", 1)});
  }
  const std::string deep_logits = deep_.DescribeOnnx(graph, deep_input);
  // In Forward's order: (wide + bias) + deep.
  const std::string wide_logits = graph.Node("Add", {wide, graph.Variable(kWideBias)});
  head_.DescribeOnnx(graph, graph.Node("Add", {wide_logits, deep_logits}));
  return absl::OkStatus();
}

absl::Status WideAndDeepModel::ComputeGradients(const ParameterView& parameters,
                                                const ExampleBatch& batch, ModelOutput* output,
                                                Gradients* gradients) {
  absl::Status status = Forward(parameters, batch, PassMode::kTrain, output);
  if (!status.ok()) return status;
  const int64_t n = batch.size;
  dlogits_.resize(n);
  status = head_.Backward(n, *output, batch.labels, dlogits_.data());
  if (!status.ok()) return status;

  const EmbeddingRows* wide = *parameters.Rows(kWideWeights, 1);
  absl::StatusOr<float*> d_wide = gradients->RowsBuffer(kWideWeights, wide->ids, 1);
  if (!d_wide.ok()) return d_wide.status();
  status = wide_lookup_.Backward(dlogits_.data(), *d_wide);
  if (!status.ok()) return status;
  absl::StatusOr<float*> d_bias = gradients->DenseBuffer(kWideBias, Shape({1}));
  if (!d_bias.ok()) return d_bias.status();
  (*d_bias)[0] = std::accumulate(dlogits_.begin(), dlogits_.end(), 0.0f);

  d_deep_input_.resize(deep_input_.size());
  status = deep_.Backward(parameters, n, deep_input_.data(), dlogits_.data(), d_deep_input_.data(),
                          gradients);
  if (!status.ok()) return status;
  const float* d_embedded = d_deep_input_.data();
  if (dense_dim_ > 0) {
    // The embeddings' part of each row; the dense features have no variable.
    const int64_t width = deep_.config().input_dim;
    d_embedded_.resize(n * embedded_width_);
    for (int64_t i = 0; i < n; ++i) {
      std::copy_n(&d_deep_input_[i * width], embedded_width_, &d_embedded_[i * embedded_width_]);
    }
    d_embedded = d_embedded_.data();
  }
  const EmbeddingRows* deep = *parameters.Rows(kDeepEmbedding, dim_);
  absl::StatusOr<float*> d_deep = gradients->RowsBuffer(kDeepEmbedding, deep->ids, dim_);
  if (!d_deep.ok()) return d_deep.status();
  return deep_lookup_.Backward(d_embedded, *d_deep);
}

}  // namespace pstrain
