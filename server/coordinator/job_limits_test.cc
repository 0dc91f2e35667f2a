#include "server/coordinator/job_limits.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

VariableSpec Dense(const std::string& name, std::vector<int64_t> dims) {
  VariableSpec v;
  v.set_name(name);
  v.set_kind(VARIABLE_KIND_DENSE);
  for (int64_t d : dims) v.mutable_shape()->add_dims(d);
  return v;
}

VariableSpec Table(const std::string& name, int64_t vocabulary, int64_t dim,
                   int64_t budget_per_shard = 0) {
  VariableSpec v;
  v.set_name(name);
  v.set_kind(VARIABLE_KIND_EMBEDDING);
  v.mutable_shape()->add_dims(vocabulary);
  v.mutable_shape()->add_dims(dim);
  v.mutable_embedding()->set_vocabulary_size(vocabulary);
  v.mutable_embedding()->set_dim(static_cast<int32_t>(dim));
  v.mutable_embedding()->set_max_bytes_per_shard(budget_per_shard);
  return v;
}

OptimizerSpec Adagrad() {
  OptimizerSpec optimizer;
  optimizer.mutable_adagrad();
  optimizer.set_learning_rate(0.1f);
  return optimizer;
}

JobSpec WideAndDeep(int64_t vocabulary, int64_t budget) {
  JobSpec spec;
  EmbeddingSpec* table = spec.mutable_model()->mutable_wide_and_deep()->mutable_embedding();
  table->set_vocabulary_size(vocabulary);
  table->set_max_bytes_per_shard(budget);
  return spec;
}

TEST(FillTableBudgetsTest, GivesADynamicTableWithoutABudgetTheDefault) {
  JobLimits limits;
  limits.default_table_bytes_per_shard = 5 << 20;
  JobSpec spec = WideAndDeep(0, 0);
  ASSERT_TRUE(FillTableBudgets(limits, spec).ok());
  EXPECT_EQ(spec.model().wide_and_deep().embedding().max_bytes_per_shard(), 5 << 20);
}

TEST(FillTableBudgetsTest, LeavesBudgetedAndFixedTablesAndOtherModelsAlone) {
  JobLimits limits;
  JobSpec budgeted = WideAndDeep(0, 1234);
  ASSERT_TRUE(FillTableBudgets(limits, budgeted).ok());
  EXPECT_EQ(budgeted.model().wide_and_deep().embedding().max_bytes_per_shard(), 1234);
  JobSpec fixed = WideAndDeep(1000, 0);
  ASSERT_TRUE(FillTableBudgets(limits, fixed).ok());
  EXPECT_EQ(fixed.model().wide_and_deep().embedding().max_bytes_per_shard(), 0);
  JobSpec mlp;
  mlp.mutable_model()->mutable_mlp();
  ASSERT_TRUE(FillTableBudgets(limits, mlp).ok());
  EXPECT_FALSE(mlp.model().has_wide_and_deep());
}

// An imported graph's dynamic tables are dynamic tables like the built-in
// models': each without a budget gets the default.
TEST(FillTableBudgetsTest, GivesAnOnnxGraphsUnbudgetedDynamicTablesTheDefault) {
  JobLimits limits;
  limits.default_table_bytes_per_shard = 5 << 20;
  JobSpec spec;
  OnnxModelSpec* onnx = spec.mutable_model()->mutable_onnx();
  onnx->add_dynamic_tables()->set_max_bytes_per_shard(1234);
  onnx->add_dynamic_tables();
  ASSERT_TRUE(FillTableBudgets(limits, spec).ok());
  EXPECT_EQ(onnx->dynamic_tables(0).max_bytes_per_shard(), 1234);
  EXPECT_EQ(onnx->dynamic_tables(1).max_bytes_per_shard(), 5 << 20);
  limits.default_table_bytes_per_shard = 0;
  onnx->mutable_dynamic_tables(1)->set_max_bytes_per_shard(0);
  const absl::Status status = FillTableBudgets(limits, spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "model.onnx.dynamic_tables[1]")) << status;
}

TEST(FillTableBudgetsTest, WithoutADefaultAnUnbudgetedTableIsRefusedNamingFieldAndFlag) {
  JobLimits limits;
  limits.default_table_bytes_per_shard = 0;
  JobSpec spec = WideAndDeep(0, 0);
  const absl::Status status = FillTableBudgets(limits, spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "model.wide_and_deep.embedding")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "max_bytes_per_shard")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "--default_table_mb_per_shard")) << status;
}

TEST(FootprintOfTest, CountsVariablesDenseBytesAndTableBytesWithSlotsAndShards) {
  JobPlan plan;
  plan.variables = {Dense("w", {10, 20}), Dense("b", {5}), Table("fixed", 1000, 8),
                    Table("dynamic", 0, 16, 1 << 20)};
  absl::StatusOr<JobFootprint> footprint = FootprintOf(plan, Adagrad(), 3);
  ASSERT_TRUE(footprint.ok()) << footprint.status();
  EXPECT_EQ(footprint->variables, 4);
  EXPECT_EQ(footprint->dense_bytes, (200 + 5) * 4);
  // The fixed table: 8000 floats and one Adagrad slot each; the dynamic
  // one: its budget on each of the 3 shards.
  EXPECT_EQ(footprint->embedding_bytes, 8000 * 4 * 2 + 3 * (1 << 20));
}

TEST(FootprintOfTest, ADynamicTableWithoutABudgetIsRefusedNamingIt) {
  JobPlan plan;
  plan.variables = {Table("plugin/table", 0, 16)};
  absl::StatusOr<JobFootprint> footprint = FootprintOf(plan, Adagrad(), 2);
  EXPECT_EQ(footprint.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(footprint.status().message(), "\"plugin/table\""))
      << footprint.status();
}

TEST(FootprintOfTest, AbsurdShapesSaturateInsteadOfWrappingAround) {
  JobPlan plan;
  plan.variables = {Dense("huge", {int64_t{1} << 40, int64_t{1} << 40})};
  absl::StatusOr<JobFootprint> footprint = FootprintOf(plan, Adagrad(), 1);
  ASSERT_TRUE(footprint.ok());
  EXPECT_EQ(footprint->dense_bytes, INT64_MAX);
  EXPECT_FALSE(CheckJobFootprint(*footprint, JobLimits()).ok());
}

TEST(CheckJobFootprintTest, EachRefusalNamesTheFigureTheLimitAndTheFlag) {
  JobLimits limits;
  limits.max_variables = 1000;
  limits.max_dense_bytes = 4 << 20;
  limits.max_embedding_bytes = 8 << 20;
  JobFootprint ok{1000, 4 << 20, 8 << 20};
  EXPECT_TRUE(CheckJobFootprint(ok, limits).ok());

  JobFootprint variables = ok;
  variables.variables = 1200;
  EXPECT_EQ(CheckJobFootprint(variables, limits),
            absl::InvalidArgumentError("the job needs 1200 variables; the coordinator allows "
                                       "1000 (--max_variables_per_job)"));

  JobFootprint dense = ok;
  dense.dense_bytes = (5 << 20) + 1;
  EXPECT_EQ(CheckJobFootprint(dense, limits),
            absl::InvalidArgumentError(
                "the job's dense variables need 5 MiB (5242881 bytes); the coordinator allows "
                "4 MiB (4194304 bytes) (--max_dense_mb_per_job)"));

  JobFootprint tables = ok;
  tables.embedding_bytes = 9 << 20;
  const absl::Status status = CheckJobFootprint(tables, limits);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "need 9 MiB")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "allows 8 MiB")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "(--max_embedding_mb_per_job)")) << status;
}

// Answers a fixed plan (or error) and keeps the spec it was asked about.
class RecordingPlanner final : public JobPlanner {
 public:
  explicit RecordingPlanner(absl::StatusOr<JobPlan> plan) : plan_(std::move(plan)) {}
  absl::StatusOr<JobPlan> Plan(const JobSpec& spec) override {
    seen = spec;
    return plan_;
  }
  JobSpec seen;

 private:
  absl::StatusOr<JobPlan> plan_;
};

TEST(LimitedJobPlannerTest, PlansTheSpecAndChecksTheLimits) {
  JobPlan plan;
  plan.variables = {Dense("w", {10}), Dense("b", {1})};
  RecordingPlanner planner(plan);
  JobLimits limits;
  limits.max_variables = 2;
  JobSpec spec = WideAndDeep(0, 1 << 20);
  *spec.mutable_optimizer() = Adagrad();
  absl::StatusOr<JobPlan> planned = LimitedJobPlanner(planner, limits, 2).Plan(spec);
  ASSERT_TRUE(planned.ok()) << planned.status();
  EXPECT_EQ(planned->variables.size(), 2u);
  EXPECT_EQ(planner.seen.model().wide_and_deep().embedding().max_bytes_per_shard(), 1 << 20);

  limits.max_variables = 1;
  planned = LimitedJobPlanner(planner, limits, 2).Plan(spec);
  EXPECT_EQ(planned.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(planned.status().message(), "--max_variables_per_job"))
      << planned.status();
}

TEST(LimitedJobPlannerTest, APlanThatFailsFailsWithThePlannersReason) {
  RecordingPlanner planner(absl::NotFoundError("train_data: no such file /data/x.csv"));
  JobSpec spec;
  *spec.mutable_optimizer() = Adagrad();
  EXPECT_EQ(LimitedJobPlanner(planner, JobLimits(), 1).Plan(spec).status(),
            absl::NotFoundError("train_data: no such file /data/x.csv"));
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
