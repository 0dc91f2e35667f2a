#include "common/export/checkpoint_loader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

}  // namespace

CheckpointAssembler::CheckpointAssembler(ModelParameters* parameters, std::string checkpoint)
    : parameters_(parameters), checkpoint_(std::move(checkpoint)) {}

absl::Status CheckpointAssembler::Add(const std::string& file,
                                      export_internal::ShardVariableValues& variable) {
  auto mismatch = [&](const std::string& what) {
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint ", checkpoint_, " does not fit the job's model: ", file, " holds ", what));
  };
  const VariableDef* def = nullptr;
  for (const VariableDef& candidate : parameters_->definitions()) {
    if (candidate.spec.name() == variable.name) def = &candidate;
  }
  if (def == nullptr) {
    return mismatch(absl::StrCat("variable ", variable.name, ", which the model does not have"));
  }
  const bool embedding = def->spec.kind() == VARIABLE_KIND_EMBEDDING;
  const std::vector<int64_t> model_dims(def->spec.shape().dims().begin(),
                                        def->spec.shape().dims().end());
  if (embedding != variable.embedding || model_dims != variable.dims) {
    return mismatch(absl::StrCat(variable.embedding ? "table " : "dense variable ", variable.name,
                                 " ", DimsString(variable.dims), "; the model has ",
                                 embedding ? "a table " : "a dense variable ",
                                 DimsString(model_dims)));
  }
  if (!embedding) {
    if (!dense_seen_.insert(variable.name).second) {
      return absl::DataLossError(absl::StrCat("checkpoint ", checkpoint_, ": dense variable ",
                                              variable.name, " is in two shards, again in ", file));
    }
    Tensor* value = parameters_->mutable_dense(variable.name);
    if (static_cast<int64_t>(variable.values.size()) != value->num_elements()) {
      return absl::DataLossError(absl::StrCat(file, ": variable ", variable.name, " has ",
                                              variable.values.size(), " values, its shape ",
                                              value->num_elements()));
    }
    std::memcpy(value->raw_data(), variable.values.data(), value->num_bytes());
    return absl::OkStatus();
  }
  EmbeddingTableValues* table = parameters_->mutable_table(variable.name);
  const int64_t dim = table->dim();
  if (static_cast<int64_t>(variable.values.size()) !=
      static_cast<int64_t>(variable.ids.size()) * dim) {
    return absl::DataLossError(absl::StrCat(file, ": table ", variable.name, " has ",
                                            variable.ids.size(), " rows but ",
                                            variable.values.size(), " values"));
  }
  for (size_t r = 0; r < variable.ids.size(); ++r) {
    const int64_t id = variable.ids[r];
    if (table->Find(id) != nullptr) {
      return absl::DataLossError(absl::StrCat("checkpoint ", checkpoint_, ": row ", id,
                                              " of table ", variable.name,
                                              " is held twice, again in ", file));
    }
    absl::Status set = table->Set(id, absl::MakeConstSpan(variable.values.data() + r * dim, dim));
    if (!set.ok()) return absl::DataLossError(absl::StrCat(file, ": ", set.message()));
  }
  return absl::OkStatus();
}

absl::Status CheckpointAssembler::Finish() const {
  for (const VariableDef& def : parameters_->definitions()) {
    if (def.spec.kind() == VARIABLE_KIND_EMBEDDING) continue;
    if (!dense_seen_.contains(def.spec.name())) {
      return absl::FailedPreconditionError(
          absl::StrCat("checkpoint ", checkpoint_,
                       " does not fit the job's model: no shard holds "
                       "variable ",
                       def.spec.name()));
    }
  }
  return absl::OkStatus();
}

absl::Status LoadCheckpointParameters(Env& env, const std::string& checkpoint_dir,
                                      const CheckpointManifest& manifest,
                                      ModelParameters* parameters) {
  CheckpointAssembler assembler(parameters, checkpoint_dir);
  for (const CheckpointShardFile& shard : manifest.shards()) {
    RETURN_IF_ERROR(export_internal::ReadShardFileVariables(
        env, checkpoint_dir, shard, [&](export_internal::ShardVariableValues& variable) {
          return assembler.Add(shard.name(), variable);
        }));
  }
  return assembler.Finish();
}

}  // namespace pstrain
