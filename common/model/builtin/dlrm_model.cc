#include "common/model/builtin/dlrm_model.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "common/model/builtin/dense_input.h"
#include "common/model/layers/onnx_layers.h"

namespace pstrain {
namespace {

// Initial rows drawn from [-kInitRange, kInitRange), as wide_and_deep's.
constexpr float kInitRange = 0.05f;

VariableDef Table(const std::string& name, const EmbeddingSpec& embedding, uint64_t seed) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(VARIABLE_KIND_EMBEDDING);
  def.spec.set_dtype(DATA_TYPE_FLOAT32);
  def.spec.mutable_shape()->add_dims(embedding.vocabulary_size());
  def.spec.mutable_shape()->add_dims(embedding.dim());
  def.spec.mutable_initializer()->set_kind(INITIALIZER_KIND_UNIFORM);
  def.spec.mutable_initializer()->set_seed(seed);
  def.spec.mutable_initializer()->set_min(-kInitRange);
  def.spec.mutable_initializer()->set_max(kInitRange);
  *def.spec.mutable_embedding() = embedding;
  return def;
}

}  // namespace

std::string DlrmModel::TableName(int32_t field) {
  return absl::StrCat("dlrm/embedding/field_", field);
}

absl::StatusOr<std::unique_ptr<DlrmModel>> DlrmModel::Create(const DlrmSpec& spec,
                                                             const ModelContext& context) {
  if (spec.num_fields() < 1 || spec.dense_dim() < 1 || spec.bottom_mlp().empty() ||
      spec.top_mlp().empty() || *spec.bottom_mlp().rbegin() != spec.embedding().dim() ||
      *spec.top_mlp().rbegin() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("model.dlrm is not resolved and valid: ", spec.ShortDebugString()));
  }
  // The bottom MLP's last layer is the stack's output layer, named as its
  // hidden layers are: every bottom layer is followed by a ReLU.
  model_internal::DenseStackConfig bottom;
  bottom.prefix = "dlrm/bottom/";
  bottom.input_dim = spec.dense_dim();
  bottom.hidden_units.assign(spec.bottom_mlp().begin(), spec.bottom_mlp().end() - 1);
  bottom.activation = ActivationKind::kRelu;
  bottom.output_dim = spec.embedding().dim();
  bottom.output_name = absl::StrCat("hidden_", spec.bottom_mlp_size() - 1);
  const int64_t vectors = spec.num_fields() + 1;
  model_internal::DenseStackConfig top;
  top.prefix = "dlrm/top/";
  top.input_dim = spec.embedding().dim() + vectors * (vectors - 1) / 2;
  top.hidden_units.assign(spec.top_mlp().begin(), spec.top_mlp().end() - 1);
  top.activation = ActivationKind::kRelu;
  top.output_dim = 1;
  return std::unique_ptr<DlrmModel>(new DlrmModel(spec, context, bottom, top));
}

DlrmModel::DlrmModel(const DlrmSpec& spec, const ModelContext& context,
                     const model_internal::DenseStackConfig& bottom,
                     const model_internal::DenseStackConfig& top)
    : spec_(spec),
      seed_(context.seed),
      dim_(spec.embedding().dim()),
      num_fields_(spec.num_fields()),
      dense_dim_(spec.dense_dim()),
      bottom_(context.compute, bottom, context.seed),
      bottom_relu_(context.compute, ActivationKind::kRelu),
      interaction_(spec.num_fields() + 1, spec.embedding().dim()),
      top_(context.compute, top, context.seed),
      head_(context.compute, PredictionKind::kBinaryProbability, 1) {
  lookups_.reserve(num_fields_);
  for (int32_t k = 0; k < num_fields_; ++k) lookups_.emplace_back(dim_, EmbeddingCombiner::kSum);
}

std::vector<VariableDef> DlrmModel::Variables() const {
  std::vector<VariableDef> defs = bottom_.Variables();
  for (int32_t k = 0; k < num_fields_; ++k) {
    // A seed per table, so that the fields' rows of one id differ.
    defs.push_back(Table(TableName(k), spec_.embedding(), seed_ + k));
  }
  for (VariableDef& def : top_.Variables()) defs.push_back(std::move(def));
  return defs;
}

absl::Status DlrmModel::CheckBatch(const ExampleBatch& batch) const {
  if (batch.size < 1) return absl::InvalidArgumentError("empty batch");
  absl::StatusOr<const float*> dense = DenseInput(batch, dense_dim_);
  if (!dense.ok()) {
    return absl::Status(dense.status().code(),
                        absl::StrCat("dlrm's bottom MLP reads ", dense_dim_,
                                     " dense features: ", dense.status().message()));
  }
  if (static_cast<int64_t>(batch.row_splits.size()) != batch.size + 1) {
    return absl::InvalidArgumentError("dlrm reads one sparse id per field; the batch has none");
  }
  for (int64_t i = 0; i < batch.size; ++i) {
    const int64_t ids = batch.row_splits[i + 1] - batch.row_splits[i];
    if (ids != num_fields_ || batch.row_splits[i] != i * num_fields_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "example ", i, " has ", ids, " ids; dlrm expects one per field, ", num_fields_));
    }
  }
  const int64_t vocabulary = spec_.embedding().vocabulary_size();
  if (vocabulary > 0) {
    for (size_t e = 0; e < batch.sparse_ids.size(); ++e) {
      const int64_t id = batch.sparse_ids[e];
      if (id < 0 || id >= vocabulary) {
        return absl::InvalidArgumentError(absl::StrCat("id ", id, " of field ", e % num_fields_,
                                                       " outside its table's vocabulary [0, ",
                                                       vocabulary, ")"));
      }
    }
  }
  return absl::OkStatus();
}

void DlrmModel::FieldIds(const ExampleBatch& batch, int32_t field,
                         std::vector<int64_t>* ids) const {
  ids->resize(batch.size);
  for (int64_t i = 0; i < batch.size; ++i) (*ids)[i] = batch.sparse_ids[i * num_fields_ + field];
}

absl::StatusOr<RowIds> DlrmModel::RowsToRead(const ExampleBatch& batch) const {
  absl::Status status = CheckBatch(batch);
  if (!status.ok()) return status;
  RowIds rows;
  std::vector<int64_t> ids;
  for (int32_t k = 0; k < num_fields_; ++k) {
    FieldIds(batch, k, &ids);
    rows[TableName(k)] = EmbeddingLookup::UniqueIds(ids);
  }
  return rows;
}

absl::Status DlrmModel::Forward(const ParameterView& parameters, const ExampleBatch& batch,
                                PassMode mode, ModelOutput* output) {
  absl::Status status = CheckBatch(batch);
  if (!status.ok()) return status;
  const int64_t n = batch.size;
  const int64_t vectors_width = (num_fields_ + 1) * dim_;

  status = bottom_.Forward(parameters, n, *DenseInput(batch, dense_dim_), mode, &bottom_pre_);
  if (!status.ok()) return status;
  bottom_out_.resize(n * dim_);
  status = bottom_relu_.Forward(n * dim_, bottom_pre_, bottom_out_.data());
  if (!status.ok()) return status;

  // Vector 0 of each example is the bottom output, vector k + 1 field k's row.
  vectors_.resize(n * vectors_width);
  for (int64_t i = 0; i < n; ++i) {
    std::copy_n(&bottom_out_[i * dim_], dim_, &vectors_[i * vectors_width]);
  }
  splits_.resize(n + 1);
  std::iota(splits_.begin(), splits_.end(), 0);
  field_rows_.resize(n * dim_);
  for (int32_t k = 0; k < num_fields_; ++k) {
    absl::StatusOr<const EmbeddingRows*> table = parameters.Rows(TableName(k), dim_);
    if (!table.ok()) return table.status();
    FieldIds(batch, k, &field_ids_);
    status = lookups_[k].Forward(splits_, field_ids_, {}, **table, field_rows_.data());
    if (!status.ok()) return status;
    for (int64_t i = 0; i < n; ++i) {
      std::copy_n(&field_rows_[i * dim_], dim_, &vectors_[i * vectors_width + (k + 1) * dim_]);
    }
  }

  interaction_out_.resize(n * interaction_.output_dim());
  status = interaction_.Forward(n, vectors_.data(), interaction_out_.data());
  if (!status.ok()) return status;
  const float* logits = nullptr;
  status = top_.Forward(parameters, n, interaction_out_.data(), mode, &logits);
  if (!status.ok()) return status;
  return head_.Forward(n, logits, batch.labels, output);
}

absl::Status DlrmModel::ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                         ModelOutput* output, Gradients* gradients) {
  absl::Status status = Forward(parameters, batch, PassMode::kTrain, output);
  if (!status.ok()) return status;
  const int64_t n = batch.size;
  const int64_t vectors_width = (num_fields_ + 1) * dim_;
  dlogits_.resize(n);
  status = head_.Backward(n, *output, batch.labels, dlogits_.data());
  if (!status.ok()) return status;

  d_interaction_.resize(interaction_out_.size());
  status = top_.Backward(parameters, n, interaction_out_.data(), dlogits_.data(),
                         d_interaction_.data(), gradients);
  if (!status.ok()) return status;
  d_vectors_.resize(vectors_.size());
  status = interaction_.Backward(n, vectors_.data(), d_interaction_.data(), d_vectors_.data());
  if (!status.ok()) return status;

  d_bottom_.resize(n * dim_);
  for (int64_t i = 0; i < n; ++i) {
    std::copy_n(&d_vectors_[i * vectors_width], dim_, &d_bottom_[i * dim_]);
  }
  status = bottom_relu_.Backward(n * dim_, bottom_pre_, d_bottom_.data(), d_bottom_.data());
  if (!status.ok()) return status;
  // The dense features have no variable: no gradient for them.
  status = bottom_.Backward(parameters, n, *DenseInput(batch, dense_dim_), d_bottom_.data(),
                            nullptr, gradients);
  if (!status.ok()) return status;

  // Each lookup still holds its own field's bags from Forward.
  d_field_.resize(n * dim_);
  for (int32_t k = 0; k < num_fields_; ++k) {
    for (int64_t i = 0; i < n; ++i) {
      std::copy_n(&d_vectors_[i * vectors_width + (k + 1) * dim_], dim_, &d_field_[i * dim_]);
    }
    const EmbeddingRows* table = *parameters.Rows(TableName(k), dim_);
    absl::StatusOr<float*> d_table = gradients->RowsBuffer(TableName(k), table->ids, dim_);
    if (!d_table.ok()) return d_table.status();
    status = lookups_[k].Backward(d_field_.data(), *d_table);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status DlrmModel::DescribeOnnx(OnnxGraph& graph) const {
  const OnnxSparseInput input = graph.SparseInput(num_fields_);
  const std::string bottom_pre = bottom_.DescribeOnnx(graph, graph.DenseInput(dense_dim_));
  // The F + 1 vectors side by side, [batch, (F + 1) * d], as Forward lays them out.
  std::vector<std::string> vectors = {OnnxActivation(graph, ActivationKind::kRelu, bottom_pre)};
  for (int32_t k = 0; k < num_fields_; ++k) {
    const std::string ids = graph.Node("Gather", {input.ids, graph.Int64Constant({}, {k})},
                                       {OnnxAttribute::Int("axis", 1)});  // [batch]
    vectors.push_back(graph.EmbeddingRows(TableName(k), ids));
  }
  const std::string side_by_side = graph.Node("Concat", vectors, {OnnxAttribute::Int("axis", 1)});
  const std::string interaction = OnnxDotInteraction(graph, interaction_, side_by_side);
  head_.DescribeOnnx(graph, top_.DescribeOnnx(graph, interaction));
  return absl::OkStatus();
}

}  // namespace pstrain
