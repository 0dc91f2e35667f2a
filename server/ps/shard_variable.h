#ifndef PSTRAIN_SERVER_PS_SHARD_VARIABLE_H_
#define PSTRAIN_SERVER_PS_SHARD_VARIABLE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/optimizer/optimizer.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/dense_variable.h"
#include "server/ps/embedding_table.h"

namespace pstrain {

// One variable held by the shard. Constant after construction except the
// values inside `dense` and `table`, which guard themselves.
struct ShardVariable {
  VariableSpec spec;
  bool embedding = false;
  // Dense: shape[0] (1 for a scalar). Embedding: vocabulary size, 0 when
  // dynamic.
  int64_t num_rows = 0;
  // Floats per row: the product of the dims after the first.
  int64_t row_width = 0;
  // Dense only.
  int64_t num_elements = 0;
  std::unique_ptr<DenseVariable> dense;
  std::unique_ptr<EmbeddingTable> table;
};

// InvalidArgument naming `field` unless `name` has 1 to 128 characters of
// [A-Za-z0-9_.-] (and '/' when `allow_slash`): a job's or a variable's name.
absl::Status ValidateName(absl::string_view field, absl::string_view name, bool allow_slash);

// Builds the variable for `spec` (validated here: InvalidArgument naming
// `field`). A dynamic table without a budget of its own gets
// `granted_budget` (0: none; see ShardMemoryPlan::table_budgets).
absl::StatusOr<std::unique_ptr<ShardVariable>> MakeShardVariable(const VariableSpec& spec,
                                                                 const std::string& field,
                                                                 uint64_t job_seed,
                                                                 const Optimizer& optimizer,
                                                                 int64_t granted_budget);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_SHARD_VARIABLE_H_
