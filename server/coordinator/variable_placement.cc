#include "server/coordinator/variable_placement.h"

#include "common/placement/variable_placement.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace coordinator {

absl::StatusOr<VariableLayout> PlaceVariables(absl::Span<const VariableSpec> variables,
                                              int num_shards) {
  // The one placement workers and shards agree on (common/placement).
  ASSIGN_OR_RETURN(VariablePlacements placements, pstrain::PlaceVariables(variables, num_shards));
  VariableLayout layout;
  for (size_t i = 0; i < variables.size(); ++i) {
    VariablePlacement& placement = layout.placements.emplace_back();
    placement.set_name(variables[i].name());
    placement.set_shard_index(placements.shard_index[i]);
  }
  for (int shard = 0; shard < num_shards; ++shard) {
    layout.shard_variables.push_back(VariablesOnShard(variables, placements, shard));
  }
  layout.shard_dense_bytes = placements.dense_bytes;
  return layout;
}

}  // namespace coordinator
}  // namespace pstrain
