#ifndef PSTRAIN_SERVER_COORDINATOR_VARIABLE_PLACEMENT_H_
#define PSTRAIN_SERVER_COORDINATOR_VARIABLE_PLACEMENT_H_

// Which parameter-server shard holds each variable of a job.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "protos/coordinator.pb.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {
namespace coordinator {

struct VariableLayout {
  // One per variable, in the order given.
  std::vector<VariablePlacement> placements;
  // Per shard: what its CreateVariables carries, i.e. its dense variables
  // and every embedding table (for the rows that hash to it), in the order
  // given.
  std::vector<std::vector<VariableSpec>> shard_variables;
  // Per shard: bytes of the dense variables it holds.
  std::vector<int64_t> shard_dense_bytes;
};

// Places `variables` on `num_shards` shards as common/placement does (each
// dense variable whole on one shard, balancing bytes; every embedding table
// on all shards, shard_index -1) and lists what each shard's
// CreateVariables carries. Deterministic: the same variables on the same
// number of shards always land the same way, which workers and a restore
// from a checkpoint rely on.
// InvalidArgument (naming the variable): as pstrain::PlaceVariables.
absl::StatusOr<VariableLayout> PlaceVariables(absl::Span<const VariableSpec> variables,
                                              int num_shards);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_VARIABLE_PLACEMENT_H_
