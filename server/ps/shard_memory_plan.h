#ifndef PSTRAIN_SERVER_PS_SHARD_MEMORY_PLAN_H_
#define PSTRAIN_SERVER_PS_SHARD_MEMORY_PLAN_H_

// How much memory a CreateVariables request asks of one shard, worked out
// before anything is allocated, so that a request over the shard's limit
// creates nothing.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

struct ShardMemoryPlan {
  // Bytes the request's variables may take on this shard, values and
  // optimizer slots: dense variables whole, a fixed table's share of its
  // rows (vocabulary / num_shards, rounded up), a dynamic table its budget.
  // With agreed sync rounds (rounds_agreed) also `staged_bytes`.
  int64_t bytes = 0;
  // Agreed sync rounds: the copies of dense gradients the shard stages, one
  // push per worker rank (StagedRound). Rows pushed to tables are staged
  // too but not counted: how many a push holds depends on its batch.
  int64_t staged_bytes = 0;
  // One per variable of the request: the budget a dynamic table without
  // one gets here, else 0. Under a limit, such tables share what the other
  // variables leave of it equally, so no table can grow until the process
  // runs out of memory.
  std::vector<int64_t> table_budgets;
};

// The plan of `request` on a shard that holds at most `max_bytes` (0: no
// limit), with `num_slots` optimizer slots per value. Shapes are not
// validated here (ParameterShard::Create does that); nonsense counts as 0.
// ResourceExhausted, naming both figures and --max_variable_mb: the
// request needs more than max_bytes, or leaves a dynamic table without a
// budget less room than one row.
absl::StatusOr<ShardMemoryPlan> PlanShardMemory(const CreateVariablesRequest& request,
                                                int num_slots, int64_t max_bytes);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_SHARD_MEMORY_PLAN_H_
