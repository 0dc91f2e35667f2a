#include "common/export/model_parameters.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pstrain {

const float* EmbeddingTableValues::Find(int64_t id) const {
  auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  return values_.data() + it->second * dim_;
}

absl::Status EmbeddingTableValues::Set(int64_t id, absl::Span<const float> values) {
  if (static_cast<int64_t>(values.size()) != dim_) {
    return absl::InvalidArgumentError(absl::StrCat("row ", id, " of table ", spec_.name(), " has ",
                                                   values.size(), " values, the table ", dim_));
  }
  if (vocabulary_ > 0 && (id < 0 || id >= vocabulary_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("id ", id, " outside [0, ", vocabulary_, ") of table ", spec_.name()));
  }
  auto [it, inserted] = index_.try_emplace(id, num_rows());
  if (inserted) values_.resize(values_.size() + dim_);
  std::copy(values.begin(), values.end(), values_.begin() + it->second * dim_);
  return absl::OkStatus();
}

std::vector<int64_t> EmbeddingTableValues::SortedIds() const {
  std::vector<int64_t> ids;
  ids.reserve(index_.size());
  for (const auto& entry : index_) ids.push_back(entry.first);
  std::sort(ids.begin(), ids.end());
  return ids;
}

absl::StatusOr<std::unique_ptr<ModelParameters>> ModelParameters::Create(
    const std::vector<VariableDef>& defs, uint64_t job_seed, UnstoredRows unstored) {
  std::unique_ptr<ModelParameters> parameters(new ModelParameters(unstored));
  for (const VariableDef& def : defs) {
    const std::string& name = def.spec.name();
    if (parameters->dense_.contains(name) || parameters->tables_.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat("variable ", name, " declared twice"));
    }
    if (def.spec.kind() == VARIABLE_KIND_EMBEDDING) {
      const auto& dims = def.spec.shape().dims();
      if (dims.size() != 2 || dims[0] < 0 || dims[1] <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("embedding table ", name, " needs shape [rows >= 0, dim > 0]"));
      }
      absl::StatusOr<Initializer> initial = Initializer::ForVariable(def.spec, job_seed);
      if (!initial.ok()) return initial.status();
      parameters->tables_.emplace(
          name, EmbeddingTableValues(def.spec, dims[1], dims[0], *std::move(initial)));
      // Created here, never in PrepareView: views hand out pointers to them.
      parameters->views_[name];
    } else {
      absl::StatusOr<Shape> shape = Shape::FromProto(def.spec.shape());
      if (!shape.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("variable ", name, ": ", shape.status().message()));
      }
      absl::StatusOr<Tensor> value = Tensor::Create(DATA_TYPE_FLOAT32, *shape);
      if (!value.ok()) return value.status();
      parameters->dense_.emplace(name, std::move(value).value());
    }
    parameters->defs_.push_back(def);
  }
  return parameters;
}

Tensor* ModelParameters::mutable_dense(const std::string& name) {
  auto it = dense_.find(name);
  return it == dense_.end() ? nullptr : &it->second;
}

const Tensor* ModelParameters::dense(const std::string& name) const {
  auto it = dense_.find(name);
  return it == dense_.end() ? nullptr : &it->second;
}

EmbeddingTableValues* ModelParameters::mutable_table(const std::string& name) {
  auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : &it->second;
}

const EmbeddingTableValues* ModelParameters::table(const std::string& name) const {
  auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : &it->second;
}

absl::Status ModelParameters::PrepareView(const RowIds& row_ids, ParameterView* view) {
  view->dense.clear();
  view->rows.clear();
  for (const auto& [name, value] : dense_) view->dense[name] = &value;
  for (const auto& [name, ids] : row_ids) {
    auto found = tables_.find(name);
    if (found == tables_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("no embedding table ", name));
    }
    const EmbeddingTableValues& table = found->second;
    EmbeddingRows& rows = views_.at(name);
    const Shape shape({static_cast<int64_t>(ids.size()), table.dim()});
    if (rows.values.shape() != shape || rows.values.dtype() != DATA_TYPE_FLOAT32) {
      absl::StatusOr<Tensor> values = Tensor::CreateUninitialized(DATA_TYPE_FLOAT32, shape);
      if (!values.ok()) return values.status();
      rows.values = std::move(values).value();
    }
    rows.ids = ids;
    float* out = rows.values.data<float>();
    for (size_t r = 0; r < ids.size(); ++r) {
      const int64_t id = ids[r];
      float* dst = out + r * table.dim();
      if (const float* stored = table.Find(id)) {
        std::copy_n(stored, table.dim(), dst);
        continue;
      }
      if (table.vocabulary() > 0 && (id < 0 || id >= table.vocabulary())) {
        return absl::InvalidArgumentError(
            absl::StrCat("id ", id, " outside [0, ", table.vocabulary(), ") of table ", name));
      }
      if (unstored_ == UnstoredRows::kZeroInDynamicTables && table.vocabulary() == 0) {
        std::fill_n(dst, table.dim(), 0.0f);
      } else {
        table.initial().FillRow(id, absl::MakeSpan(dst, table.dim()));
      }
    }
    view->rows[name] = &rows;
  }
  return absl::OkStatus();
}

}  // namespace pstrain
