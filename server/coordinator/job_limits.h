#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_LIMITS_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_LIMITS_H_

// What one job may ask of the cluster. The coordinator checks a job against
// these when the job plans (its first phase: reading its data, building its
// model), so a job that could never run ends FAILED at once with its
// figure, the limit and the flag that sets it, before any parameter server
// holds a variable of it. Submit only fills the table budgets: it answers
// without reading the data.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protos/job.pb.h"
#include "server/coordinator/job_planner.h"

namespace pstrain {
namespace coordinator {

struct JobLimits {
  // Variables of the model (--max_variables_per_job). Every push and pull
  // names each variable and every shard keeps per-variable state, so a
  // model with a million tiny variables would be slow long before it ran
  // out of memory. Default 10000, ten times the largest common models.
  int64_t max_variables = 10000;
  // Bytes of the dense variables' float32 values (--max_dense_mb_per_job).
  // Every worker pulls and holds all of them, with their gradients, so this
  // bounds a worker's memory. Default 4 GiB (a billion parameters).
  int64_t max_dense_bytes = int64_t{4} << 30;
  // Bytes the embedding tables may take on the parameter servers, values
  // and optimizer slots, over all shards (--max_embedding_mb_per_job): a
  // fixed table's rows, and a dynamic table's budget (max_bytes_per_shard)
  // on each shard. Default 32 GiB.
  int64_t max_embedding_bytes = int64_t{32} << 30;
  // The budget per shard given to a dynamic table of a built-in model that
  // has none (--default_table_mb_per_shard). A table without a budget grows
  // with every new id until its shard runs out of memory. 0: refuse such
  // tables instead. Default 256 MiB, about 4 million rows of 16 floats with
  // an Adagrad slot.
  int64_t default_table_bytes_per_shard = int64_t{256} << 20;
};

// What a job's plan asks of the cluster, in the units of JobLimits.
struct JobFootprint {
  int64_t variables = 0;
  int64_t dense_bytes = 0;
  int64_t embedding_bytes = 0;
};

// Gives each dynamic table of `spec`'s model without a budget (as its
// ModelKind declares them: wide_and_deep.embedding with vocabulary_size 0,
// onnx.dynamic_tables, each with max_bytes_per_shard 0) the default budget,
// so the filled spec shows it.
// InvalidArgument, naming the field and the flag: such a table when
// default_table_bytes_per_shard is 0.
absl::Status FillTableBudgets(const JobLimits& limits, JobSpec& spec);

// The footprint of `plan` on `num_ps` shards, with the optimizer slots of
// `optimizer`.
// InvalidArgument: a dynamic table without a budget (a plug-in model must
// set embedding.max_bytes_per_shard), or an optimizer that cannot be made.
absl::StatusOr<JobFootprint> FootprintOf(const JobPlan& plan, const OptimizerSpec& optimizer,
                                         int num_ps);

// OK when `footprint` is within `limits`. InvalidArgument names the first
// figure over its limit: "the job needs 1200 variables; the coordinator
// allows 1000 (--max_variables_per_job)". A job over a limit can never run
// here as it is, so it is the request that must change.
absl::Status CheckJobFootprint(const JobFootprint& footprint, const JobLimits& limits);

// The planner of a cluster with limits: plans as `planner` does, then
// refuses a plan whose footprint on `num_ps` shards is over `limits`
// (CheckJobFootprint's error). Thread-safe when `planner` is.
class LimitedJobPlanner final : public JobPlanner {
 public:
  // `planner` is borrowed and must outlive this one. `num_ps` is the number
  // of shards jobs run on; 0 (not known before a job starts) counts one.
  LimitedJobPlanner(JobPlanner& planner, JobLimits limits, int num_ps);

  absl::StatusOr<JobPlan> Plan(const JobSpec& spec) override;

 private:
  JobPlanner& planner_;
  const JobLimits limits_;
  const int num_ps_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_LIMITS_H_
