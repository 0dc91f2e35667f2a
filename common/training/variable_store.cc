#include "common/training/variable_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

template <typename Map>
std::vector<const std::string*> SortedKeys(const Map& map) {
  std::vector<const std::string*> keys;
  keys.reserve(map.size());
  for (const auto& entry : map) keys.push_back(&entry.first);
  std::sort(keys.begin(), keys.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  return keys;
}

}  // namespace

absl::StatusOr<std::unique_ptr<VariableStore>> VariableStore::Create(
    const std::vector<VariableDef>& defs, uint64_t job_seed, const Optimizer* optimizer) {
  std::unique_ptr<VariableStore> store(new VariableStore(optimizer));
  for (const VariableDef& def : defs) {
    const std::string& name = def.spec.name();
    if (store->dense_.contains(name) || store->tables_.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat("variable ", name, " declared twice"));
    }
    if (def.spec.kind() == VARIABLE_KIND_EMBEDDING) {
      const auto& dims = def.spec.shape().dims();
      if (dims.size() != 2 || dims[0] < 0 || dims[1] <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("embedding table ", name, " needs shape [rows, dim > 0]"));
      }
      absl::StatusOr<Initializer> init = Initializer::ForVariable(def.spec, job_seed);
      if (!init.ok()) return init.status();
      Table table{def, *std::move(init)};
      table.vocabulary = dims[0];
      table.dim = dims[1];
      store->tables_.emplace(name, std::move(table));
      continue;
    }
    absl::StatusOr<Shape> shape = Shape::FromProto(def.spec.shape());
    if (!shape.ok()) return shape.status();
    absl::StatusOr<Tensor> value = Tensor::Create(DATA_TYPE_FLOAT32, *shape);
    if (!value.ok()) return value.status();
    DenseVariable variable;
    variable.def = def;
    variable.value = std::move(value).value();
    absl::StatusOr<Initializer> init = Initializer::ForVariable(def.spec, job_seed);
    if (!init.ok()) return init.status();
    init->FillDense(0, absl::MakeSpan(variable.value.data<float>(), variable.value.num_elements()));
    if (def.trainable) {
      for (int k = 0; k < optimizer->num_slots(); ++k) {
        absl::StatusOr<Tensor> slot = Tensor::CreateUninitialized(DATA_TYPE_FLOAT32, *shape);
        if (!slot.ok()) return slot.status();
        slot->flat<float>().setConstant(optimizer->slot_initial_value(k));
        variable.slots.push_back(std::move(slot).value());
      }
    }
    store->dense_[name] = std::move(variable);
  }
  return store;
}

absl::StatusOr<std::vector<float>*> VariableStore::GetOrCreateRow(Table* table, int64_t id) {
  auto it = table->rows.find(id);
  if (it != table->rows.end()) return &it->second;
  if (table->vocabulary > 0 && (id < 0 || id >= table->vocabulary)) {
    return absl::InvalidArgumentError(absl::StrCat("id ", id, " outside [0, ", table->vocabulary,
                                                   ") of table ", table->def.spec.name()));
  }
  std::vector<float> row(table->def.trainable ? optimizer_->row_floats(table->dim) : table->dim);
  table->init.FillRow(id, absl::MakeSpan(row.data(), table->dim));
  if (table->def.trainable) optimizer_->InitializeRowSlots(table->dim, row.data());
  return &table->rows.emplace(id, std::move(row)).first->second;
}

absl::Status VariableStore::PrepareView(const RowIds& row_ids, ParameterView* view) {
  view->dense.clear();
  view->rows.clear();
  for (const auto& [name, variable] : dense_) view->dense[name] = &variable.value;
  for (const auto& [name, ids] : row_ids) {
    auto it = tables_.find(name);
    if (it == tables_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("no embedding table ", name));
    }
    Table& table = it->second;
    const Shape shape({static_cast<int64_t>(ids.size()), table.dim});
    if (table.view.values.shape() != shape || table.view.values.dtype() != DATA_TYPE_FLOAT32) {
      absl::StatusOr<Tensor> values = Tensor::CreateUninitialized(DATA_TYPE_FLOAT32, shape);
      if (!values.ok()) return values.status();
      table.view.values = std::move(values).value();
    }
    table.view.ids = ids;
    float* out = table.view.values.data<float>();
    for (size_t r = 0; r < ids.size(); ++r) {
      absl::StatusOr<std::vector<float>*> row = GetOrCreateRow(&table, ids[r]);
      if (!row.ok()) return row.status();
      std::copy_n((*row)->data(), table.dim, out + r * table.dim);
    }
    view->rows[name] = &table.view;
  }
  return absl::OkStatus();
}

absl::Status VariableStore::Apply(const Gradients& gradients, const UpdateStep& step) {
  for (const auto& [name, grad] : gradients.dense) {
    auto it = dense_.find(name);
    if (it == dense_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("gradient for unknown variable ", name));
    }
    DenseVariable& variable = it->second;
    if (!variable.def.trainable) continue;
    if (grad.dtype() != DATA_TYPE_FLOAT32 || grad.shape() != variable.value.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("gradient of ", name, " is ",
                                                     grad.DebugString(), ", the variable ",
                                                     variable.value.DebugString()));
    }
    std::vector<float*> slots;
    for (Tensor& slot : variable.slots) slots.push_back(slot.data<float>());
    optimizer_->Apply(step, grad.data<float>(), grad.num_elements(), variable.value.data<float>(),
                      slots.data());
  }
  for (const auto& [name, grad] : gradients.rows) {
    auto it = tables_.find(name);
    if (it == tables_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("gradient for unknown table ", name));
    }
    Table& table = it->second;
    if (!table.def.trainable) continue;
    const Shape shape({static_cast<int64_t>(grad.ids.size()), table.dim});
    if (grad.values.dtype() != DATA_TYPE_FLOAT32 || grad.values.shape() != shape) {
      return absl::InvalidArgumentError(
          absl::StrCat("gradient rows of ", name, " are ", grad.values.DebugString()));
    }
    const float* g = grad.values.data<float>();
    for (size_t r = 0; r < grad.ids.size(); ++r) {
      auto row = table.rows.find(grad.ids[r]);
      if (row == table.rows.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("gradient for row ", grad.ids[r], " of ", name, ", never read"));
      }
      optimizer_->ApplyToRow(step, g + r * table.dim, table.dim, row->second.data());
    }
  }
  return absl::OkStatus();
}

const Tensor* VariableStore::dense(const std::string& name) const {
  auto it = dense_.find(name);
  return it == dense_.end() ? nullptr : &it->second.value;
}

absl::StatusOr<std::vector<float>> VariableStore::Row(const std::string& name, int64_t id) const {
  auto table = tables_.find(name);
  if (table == tables_.end()) return absl::NotFoundError(absl::StrCat("no table ", name));
  auto row = table->second.rows.find(id);
  if (row == table->second.rows.end()) {
    return absl::NotFoundError(absl::StrCat("no row ", id, " in ", name));
  }
  return std::vector<float>(row->second.begin(), row->second.begin() + table->second.dim);
}

int64_t VariableStore::num_rows(const std::string& name) const {
  auto table = tables_.find(name);
  return table == tables_.end() ? 0 : static_cast<int64_t>(table->second.rows.size());
}

absl::StatusOr<ShardFileInfo> VariableStore::WriteCheckpointShard(ShardFileHeader header,
                                                                  ShardFileWriter& writer) const {
  const int num_slots = optimizer_->num_slots();
  header.shard_index = 0;
  header.num_shards = 1;
  header.optimizer = optimizer_->name();
  header.num_slots = num_slots;
  header.num_variables = static_cast<int64_t>(dense_.size() + tables_.size());
  RETURN_IF_ERROR(writer.WriteHeader(header));

  // In name order, so the same variables always make the same file.
  for (const std::string* name : SortedKeys(dense_)) {
    const DenseVariable& variable = dense_.at(*name);
    const int64_t n = variable.value.num_elements();
    // A variable that is not trained has no slots here; the file has room
    // for them all the same.
    std::vector<std::vector<float>> untrained_slots;
    untrained_slots.reserve(num_slots);  // the spans below point into it
    std::vector<absl::Span<const float>> slots;
    for (int k = 0; k < num_slots; ++k) {
      if (k < static_cast<int>(variable.slots.size())) {
        slots.emplace_back(variable.slots[k].data<float>(), n);
      } else {
        untrained_slots.emplace_back(n, optimizer_->slot_initial_value(k));
        slots.emplace_back(untrained_slots.back());
      }
    }
    ShardFileVariable record;
    record.name = *name;
    record.kind = VARIABLE_KIND_DENSE;
    record.dims.assign(variable.def.spec.shape().dims().begin(),
                       variable.def.spec.shape().dims().end());
    record.num_elements = n;
    RETURN_IF_ERROR(writer.WriteDenseVariable(
        record, absl::MakeConstSpan(variable.value.data<float>(), n), slots));
  }

  for (const std::string* name : SortedKeys(tables_)) {
    const Table& table = tables_.at(*name);
    ShardFileVariable record;
    record.name = *name;
    record.kind = VARIABLE_KIND_EMBEDDING;
    record.dims = {table.vocabulary, table.dim};
    record.num_rows = static_cast<int64_t>(table.rows.size());
    record.row_floats = optimizer_->row_floats(table.dim);
    RETURN_IF_ERROR(writer.BeginTable(record));
    std::vector<int64_t> ids;
    ids.reserve(table.rows.size());
    for (const auto& [id, row] : table.rows) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (int64_t id : ids) RETURN_IF_ERROR(writer.AppendRow(id, table.rows.at(id).data()));
    RETURN_IF_ERROR(writer.EndTable());
  }
  RETURN_IF_ERROR(writer.WriteDedupState(""));
  return writer.Commit();
}

}  // namespace pstrain
