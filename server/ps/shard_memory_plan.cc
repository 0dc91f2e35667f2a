#include "server/ps/shard_memory_plan.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

constexpr int64_t kFloatBytes = 4;

int64_t SaturatingProduct(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  if (a > INT64_MAX / b) return INT64_MAX;
  return a * b;
}

int64_t SaturatingSum(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

std::string Figure(int64_t bytes) {
  return absl::StrCat(bytes >> 20, " MiB (", bytes, " bytes)");
}

}  // namespace

absl::StatusOr<ShardMemoryPlan> PlanShardMemory(const CreateVariablesRequest& request,
                                                int num_slots, int64_t max_bytes) {
  const int64_t per_value = kFloatBytes * (1 + std::max(0, num_slots));
  const int64_t num_shards = std::max(1, request.num_shards());
  ShardMemoryPlan plan;
  plan.table_budgets.assign(request.variables_size(), 0);
  std::vector<int> unbudgeted;
  int64_t largest_row = 1;
  int64_t dense_elements = 0;
  for (int i = 0; i < request.variables_size(); ++i) {
    const VariableSpec& v = request.variables(i);
    const auto& dims = v.shape().dims();
    int64_t bytes = 0;
    if (v.kind() == VARIABLE_KIND_EMBEDDING && dims.size() == 2) {
      const int64_t row = SaturatingProduct(dims[1], per_value);
      if (dims[0] > 0) {
        bytes = SaturatingProduct((dims[0] + num_shards - 1) / num_shards, row);
      } else if (v.embedding().max_bytes_per_shard() > 0) {
        bytes = v.embedding().max_bytes_per_shard();
      } else {
        unbudgeted.push_back(i);
        largest_row = std::max(largest_row, row);
      }
    } else if (v.kind() == VARIABLE_KIND_DENSE) {
      int64_t elements = 1;
      for (int64_t d : dims) elements = SaturatingProduct(elements, d);
      bytes = SaturatingProduct(elements, per_value);
      dense_elements = SaturatingSum(dense_elements, elements);
    }
    plan.bytes = SaturatingSum(plan.bytes, bytes);
  }
  if (request.rounds_agreed()) {
    // Planned for the workers the job starts with; each worker that joins
    // later stages one more push.
    plan.staged_bytes = SaturatingProduct(SaturatingProduct(dense_elements, kFloatBytes),
                                          std::max(1, request.num_workers()));
    plan.bytes = SaturatingSum(plan.bytes, plan.staged_bytes);
  }
  if (max_bytes <= 0) return plan;
  if (plan.bytes > max_bytes) {
    const std::string staged =
        plan.staged_bytes > 0
            ? absl::StrCat(", and ", Figure(plan.staged_bytes),
                           " of gradients staged for agreed sync rounds, one push per worker")
            : "";
    return absl::ResourceExhaustedError(
        absl::StrCat("the variables of job ", request.job_id(), " need ", Figure(plan.bytes),
                     " on this parameter server (values and optimizer slots", staged,
                     "); it allows ", Figure(max_bytes), " (--max_variable_mb)"));
  }
  if (unbudgeted.empty()) return plan;
  const int64_t share = (max_bytes - plan.bytes) / static_cast<int64_t>(unbudgeted.size());
  if (share < largest_row) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the variables of job ", request.job_id(), " leave ", Figure(max_bytes - plan.bytes),
        " of this parameter server's ", Figure(max_bytes),
        " (--max_variable_mb) for ", unbudgeted.size(),
        " dynamic tables without a budget: not one row each"));
  }
  for (int i : unbudgeted) plan.table_budgets[i] = share;
  plan.bytes = max_bytes - (max_bytes - plan.bytes) % static_cast<int64_t>(unbudgeted.size());
  return plan;
}

}  // namespace pstrain
