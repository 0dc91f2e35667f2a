#include "common/export/testing/parameters_checkpoint.h"

#include <memory>
#include <vector>

#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_writer.h"
#include "common/checkpoint/shard_file.h"
#include "common/placement/row_placement.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr float kSlotValue = 0.5f;

absl::StatusOr<ShardFileInfo> WriteShard(Env& env, const std::string& path, int64_t step,
                                         const ModelParameters& parameters, int shard,
                                         int num_shards, int num_slots) {
  const std::vector<VariableDef>& defs = parameters.definitions();
  std::vector<const VariableDef*> held;
  for (size_t i = 0; i < defs.size(); ++i) {
    const bool embedding = defs[i].spec.kind() == VARIABLE_KIND_EMBEDDING;
    if (embedding || static_cast<int>(i % num_shards) == shard) held.push_back(&defs[i]);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ShardFileWriter> writer, ShardFileWriter::Create(env, path));
  ShardFileHeader header;
  header.job_id = "job-1";
  header.shard_index = shard;
  header.num_shards = num_shards;
  header.version = step;
  header.global_step = step;
  header.optimizer = "test";
  header.num_slots = num_slots;
  header.num_variables = static_cast<int64_t>(held.size());
  RETURN_IF_ERROR(writer->WriteHeader(header));
  for (const VariableDef* def : held) {
    ShardFileVariable variable;
    variable.name = def->spec.name();
    variable.kind =
        def->spec.kind() == VARIABLE_KIND_EMBEDDING ? VARIABLE_KIND_EMBEDDING : VARIABLE_KIND_DENSE;
    variable.dims.assign(def->spec.shape().dims().begin(), def->spec.shape().dims().end());
    if (variable.kind == VARIABLE_KIND_DENSE) {
      const Tensor* value = parameters.dense(variable.name);
      variable.num_elements = value->num_elements();
      const std::vector<float> slot(value->num_elements(), kSlotValue);
      const std::vector<absl::Span<const float>> slots(num_slots, absl::MakeConstSpan(slot));
      RETURN_IF_ERROR(writer->WriteDenseVariable(
          variable, absl::MakeConstSpan(value->data<float>(), value->num_elements()), slots));
      continue;
    }
    const EmbeddingTableValues* table = parameters.table(variable.name);
    std::vector<int64_t> ids;
    for (int64_t id : table->SortedIds()) {
      if (RowShard(id, num_shards) == shard) ids.push_back(id);
    }
    variable.num_rows = static_cast<int64_t>(ids.size());
    variable.row_floats = table->dim() * (1 + num_slots);
    RETURN_IF_ERROR(writer->BeginTable(variable));
    std::vector<float> row(variable.row_floats, kSlotValue);
    for (int64_t id : ids) {
      std::copy_n(table->Find(id), table->dim(), row.begin());
      RETURN_IF_ERROR(writer->AppendRow(id, row.data()));
    }
    RETURN_IF_ERROR(writer->EndTable());
  }
  RETURN_IF_ERROR(writer->WriteDedupState(""));
  return writer->Commit();
}

}  // namespace

absl::StatusOr<CheckpointManifest> WriteParametersCheckpoint(Env& env, const std::string& model_dir,
                                                             int64_t step,
                                                             const ModelParameters& parameters,
                                                             int num_shards, bool final,
                                                             int num_slots, const JobSpec& spec) {
  ASSIGN_OR_RETURN(PendingCheckpoint pending, BeginCheckpoint(env, model_dir, step));
  CheckpointManifest manifest;
  manifest.set_job_id("job-1");
  manifest.set_final(final);
  *manifest.mutable_spec() = spec;
  for (int shard = 0; shard < num_shards; ++shard) {
    ASSIGN_OR_RETURN(ShardFileInfo info, WriteShard(env, pending.ShardPath(shard, num_shards), step,
                                                    parameters, shard, num_shards, num_slots));
    CheckpointShardFile* entry = manifest.add_shards();
    entry->set_name(ShardFileName(shard, num_shards));
    entry->set_shard_index(shard);
    entry->set_bytes(info.bytes);
    entry->set_crc32c(info.crc32c);
  }
  return CommitCheckpoint(env, pending, manifest);
}

}  // namespace pstrain
