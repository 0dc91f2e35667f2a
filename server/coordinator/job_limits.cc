#include "server/coordinator/job_limits.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/model/model_kind.h"
#include "common/optimizer/optimizer.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace coordinator {
namespace {

constexpr int64_t kFloatBytes = 4;
constexpr int64_t kMiB = int64_t{1} << 20;

// "1200" for counts, "5120 MiB (5368709120 bytes)" for bytes: the limits
// are set in MiB, the exact figure helps when a job is just over.
std::string Bytes(int64_t bytes) {
  return absl::StrCat(bytes / kMiB, " MiB (", bytes, " bytes)");
}

// a * b, saturating instead of overflowing on absurd shapes.
int64_t SaturatingProduct(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > INT64_MAX / b) return INT64_MAX;
  return a * b;
}

int64_t SaturatingSum(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

}  // namespace

absl::Status FillTableBudgets(const JobLimits& limits, JobSpec& spec) {
  const ModelKind* kind = ModelKindOf(spec.model().kind_case());
  if (kind == nullptr || kind->unbudgeted_tables == nullptr) return absl::OkStatus();
  const std::vector<UnbudgetedTable> tables = kind->unbudgeted_tables(spec.mutable_model());
  if (tables.empty()) return absl::OkStatus();
  if (limits.default_table_bytes_per_shard <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        tables.front().path,
        " is a dynamic table without a budget: set its max_bytes_per_shard (the coordinator "
        "gives none, --default_table_mb_per_shard=0)"));
  }
  for (const UnbudgetedTable& table : tables) {
    table.set_budget(limits.default_table_bytes_per_shard);
  }
  return absl::OkStatus();
}

absl::StatusOr<JobFootprint> FootprintOf(const JobPlan& plan, const OptimizerSpec& optimizer,
                                         int num_ps) {
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> rule, Optimizer::Create(optimizer));
  const int64_t shards = std::max(1, num_ps);
  JobFootprint footprint;
  footprint.variables = static_cast<int64_t>(plan.variables.size());
  for (const VariableSpec& variable : plan.variables) {
    int64_t elements = 1;
    for (int64_t dim : variable.shape().dims()) elements = SaturatingProduct(elements, dim);
    if (variable.kind() != VARIABLE_KIND_EMBEDDING) {
      footprint.dense_bytes =
          SaturatingSum(footprint.dense_bytes, SaturatingProduct(elements, kFloatBytes));
      continue;
    }
    int64_t table_bytes;
    if (variable.shape().dims_size() > 0 && variable.shape().dims(0) == 0) {
      const int64_t budget = variable.embedding().max_bytes_per_shard();
      if (budget <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the model's table \"", variable.name(),
            "\" is dynamic (vocabulary_size 0) without a budget; give it "
            "embedding.max_bytes_per_shard, or it grows until its parameter server runs out "
            "of memory"));
      }
      table_bytes = SaturatingProduct(budget, shards);
    } else {
      table_bytes = SaturatingProduct(SaturatingProduct(elements, kFloatBytes),
                                      1 + rule->num_slots());
    }
    footprint.embedding_bytes = SaturatingSum(footprint.embedding_bytes, table_bytes);
  }
  return footprint;
}

absl::Status CheckJobFootprint(const JobFootprint& footprint, const JobLimits& limits) {
  if (footprint.variables > limits.max_variables) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the job needs ", footprint.variables, " variables; the coordinator allows ",
        limits.max_variables, " (--max_variables_per_job)"));
  }
  if (footprint.dense_bytes > limits.max_dense_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the job's dense variables need ", Bytes(footprint.dense_bytes),
        "; the coordinator allows ", Bytes(limits.max_dense_bytes), " (--max_dense_mb_per_job)"));
  }
  if (footprint.embedding_bytes > limits.max_embedding_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the job's embedding tables need ", Bytes(footprint.embedding_bytes),
        " on the parameter servers (rows and optimizer slots; a dynamic table its budget on "
        "each shard); the coordinator allows ",
        Bytes(limits.max_embedding_bytes), " (--max_embedding_mb_per_job)"));
  }
  return absl::OkStatus();
}

LimitedJobPlanner::LimitedJobPlanner(JobPlanner& planner, JobLimits limits, int num_ps)
    : planner_(planner), limits_(limits), num_ps_(num_ps) {}

absl::StatusOr<JobPlan> LimitedJobPlanner::Plan(const JobSpec& spec) {
  ASSIGN_OR_RETURN(JobPlan plan, planner_.Plan(spec));
  ASSIGN_OR_RETURN(const JobFootprint footprint, FootprintOf(plan, spec.optimizer(), num_ps_));
  RETURN_IF_ERROR(CheckJobFootprint(footprint, limits_));
  return plan;
}

}  // namespace coordinator
}  // namespace pstrain
