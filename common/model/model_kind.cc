#include "common/model/model_kind.h"

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

absl::string_view Accuracy(const ModelSpec&) { return "accuracy"; }
absl::string_view Mse(const ModelSpec&) { return "mse"; }
absl::string_view NoQualityMetric(const ModelSpec&) { return ""; }
absl::string_view MlpQualityMetric(const ModelSpec& model) {
  return model.mlp().regression() ? "mse" : "accuracy";
}
absl::string_view OnnxQualityMetric(const ModelSpec& model) {
  return model.onnx().loss() == ONNX_LOSS_MEAN_SQUARED_ERROR ? "mse" : "accuracy";
}

std::vector<UnbudgetedTable> WideAndDeepTables(ModelSpec* model) {
  EmbeddingSpec* table = model->mutable_wide_and_deep()->mutable_embedding();
  if (table->vocabulary_size() != 0 || table->max_bytes_per_shard() != 0) return {};
  return {{"model.wide_and_deep.embedding",
           [table](int64_t bytes) { table->set_max_bytes_per_shard(bytes); }}};
}

// The one EmbeddingSpec of every field's table: its budget is each table's.
std::vector<UnbudgetedTable> DlrmTables(ModelSpec* model) {
  EmbeddingSpec* tables = model->mutable_dlrm()->mutable_embedding();
  if (tables->vocabulary_size() != 0 || tables->max_bytes_per_shard() != 0) return {};
  return {{"model.dlrm.embedding",
           [tables](int64_t bytes) { tables->set_max_bytes_per_shard(bytes); }}};
}

std::vector<UnbudgetedTable> OnnxTables(ModelSpec* model) {
  std::vector<UnbudgetedTable> tables;
  OnnxModelSpec* onnx = model->mutable_onnx();
  for (int i = 0; i < onnx->dynamic_tables_size(); ++i) {
    OnnxDynamicTable* table = onnx->mutable_dynamic_tables(i);
    if (table->max_bytes_per_shard() != 0) continue;
    tables.push_back({absl::StrCat("model.onnx.dynamic_tables[", i, "]"),
                      [table](int64_t bytes) { table->set_max_bytes_per_shard(bytes); }});
  }
  return tables;
}

// One row per ModelSpec kind, in the proto's order.
constexpr ModelKind kModelKinds[] = {
    // kind, name, needs_images, needs_ids, quality_metric, unbudgeted_tables
    {ModelSpec::kLinearRegression, "linear_regression", false, false, Mse, nullptr},
    {ModelSpec::kLogisticRegression, "logistic_regression", false, false, Accuracy, nullptr},
    {ModelSpec::kMlp, "mlp", false, false, MlpQualityMetric, nullptr},
    {ModelSpec::kCnn, "cnn", true, false, Accuracy, nullptr},
    {ModelSpec::kWideAndDeep, "wide_and_deep", false, true, Accuracy, WideAndDeepTables},
    {ModelSpec::kPlugin, "plugin", false, false, NoQualityMetric, nullptr},
    // What an ONNX graph reads, features or ids, its file says (OnnxModel::Create).
    {ModelSpec::kOnnx, "onnx", false, false, OnnxQualityMetric, OnnxTables},
    {ModelSpec::kDlrm, "dlrm", false, true, Accuracy, DlrmTables},
};

}  // namespace

absl::Span<const ModelKind> ModelKinds() { return kModelKinds; }

const ModelKind* ModelKindOf(ModelSpec::KindCase kind) {
  for (const ModelKind& row : kModelKinds) {
    if (row.kind == kind) return &row;
  }
  return nullptr;
}

}  // namespace pstrain
