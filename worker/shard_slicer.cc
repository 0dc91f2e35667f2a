#include "worker/shard_slicer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/placement/row_placement.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace worker {

absl::StatusOr<ShardSlicer> ShardSlicer::Create(
    const std::vector<VariableDef>& variables,
    const google::protobuf::RepeatedPtrField<VariablePlacement>& placements, int num_shards) {
  if (num_shards < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the assignment names ", num_shards, " parameter servers; need at least 1"));
  }
  absl::flat_hash_map<std::string, int> shard_of;
  for (const VariablePlacement& p : placements) shard_of[p.name()] = p.shard_index();

  ShardSlicer slicer;
  slicer.num_shards_ = num_shards;
  slicer.dense_on_.resize(num_shards);
  for (const VariableDef& def : variables) {
    const VariableSpec& spec = def.spec;
    if (spec.dtype() != DATA_TYPE_FLOAT32) {
      return absl::InvalidArgumentError(
          absl::StrCat("variable \"", spec.name(), "\" is not float32"));
    }
    ASSIGN_OR_RETURN(Shape shape, Shape::FromProto(spec.shape()));
    auto placed = shard_of.find(spec.name());
    if (spec.kind() == VARIABLE_KIND_EMBEDDING) {
      if (shape.rank() != 2 || shape.dim(1) < 1) {
        return absl::InvalidArgumentError(absl::StrCat("embedding table \"", spec.name(),
                                                       "\" has shape ", shape.DebugString(),
                                                       "; want [vocabulary_size, dim]"));
      }
      if (placed != shard_of.end() && placed->second >= 0) {
        return absl::InvalidArgumentError(absl::StrCat("embedding table \"", spec.name(),
                                                       "\" is placed on shard ", placed->second,
                                                       "; its rows belong on every shard (-1)"));
      }
      slicer.table_index_[spec.name()] = static_cast<int>(slicer.tables_.size());
      slicer.tables_.push_back({spec.name(), shape.dim(1)});
      continue;
    }
    if (placed == shard_of.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the assignment places no shard for variable \"", spec.name(), "\""));
    }
    if (placed->second < 0 || placed->second >= num_shards) {
      return absl::InvalidArgumentError(absl::StrCat("variable \"", spec.name(),
                                                     "\" is placed on shard ", placed->second,
                                                     "; there are ", num_shards));
    }
    const int index = static_cast<int>(slicer.dense_.size());
    slicer.dense_index_[spec.name()] = index;
    slicer.dense_on_[placed->second].push_back(index);
    slicer.dense_.push_back({spec.name(), std::move(shape), placed->second});
  }
  return slicer;
}

const DenseVariableSlot* ShardSlicer::FindDense(const std::string& name) const {
  auto it = dense_index_.find(name);
  return it == dense_index_.end() ? nullptr : &dense_[it->second];
}

const EmbeddingTableSlot* ShardSlicer::FindTable(const std::string& name) const {
  auto it = table_index_.find(name);
  return it == table_index_.end() ? nullptr : &tables_[it->second];
}

std::vector<std::vector<int32_t>> ShardSlicer::SliceIds(absl::Span<const int64_t> ids) const {
  std::vector<std::vector<int32_t>> positions(num_shards_);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int shard = num_shards_ == 1 ? 0 : RowShard(ids[i], num_shards_);
    positions[shard].push_back(static_cast<int32_t>(i));
  }
  return positions;
}

}  // namespace worker
}  // namespace pstrain
