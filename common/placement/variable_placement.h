#ifndef PSTRAIN_COMMON_PLACEMENT_VARIABLE_PLACEMENT_H_
#define PSTRAIN_COMMON_PLACEMENT_VARIABLE_PLACEMENT_H_

// Which parameter-server shards hold a job's variables: each dense variable
// lives whole on one shard, chosen to balance bytes; every embedding table
// is spread over all shards row by row (common/placement/row_placement.h).

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

// The shard index of an embedding table, whose rows live on every shard (as
// VariablePlacement.shard_index in protos/coordinator.proto says).
inline constexpr int kEveryShard = -1;

// The placement of a job's variables over num_shards shards.
struct VariablePlacements {
  // One per variable, in the order given to PlaceVariables: the shard that
  // holds a dense variable, kEveryShard for an embedding table.
  std::vector<int> shard_index;
  // Bytes of dense values on each shard (num_shards entries). Optimizer
  // slots multiply every shard's bytes alike and are left out.
  std::vector<int64_t> dense_bytes;
};

// Places the dense variables of `variables` by the longest-processing-time
// rule: largest first (by bytes, then by name), each on the shard holding
// the fewest bytes so far (the lowest index among equals). The fullest
// shard then holds at most 4/3 of the best possible maximum, and at most the
// largest variable more than the emptiest one. The result depends only on
// the variables' names, kinds and shapes, not on their order, so every
// process that places the same job gets the same answer. Thread-safe.
// InvalidArgument (naming the variable): num_shards < 1; a name that is
// empty or appears twice; a dense dim <= 0 or more than 2^40 elements in
// all; an embedding shape other than [rows >= 0, dim > 0]; another kind.
absl::StatusOr<VariablePlacements> PlaceVariables(absl::Span<const VariableSpec> variables,
                                                  int num_shards);

// The variables shard `shard_index` holds under `placements` (made from
// `variables`): its dense variables and every embedding table, in the order
// given; what its CreateVariablesRequest.variables lists.
std::vector<VariableSpec> VariablesOnShard(absl::Span<const VariableSpec> variables,
                                           const VariablePlacements& placements, int shard_index);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_PLACEMENT_VARIABLE_PLACEMENT_H_
