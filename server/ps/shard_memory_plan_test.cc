#include "server/ps/shard_memory_plan.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

VariableSpec Dense(int64_t rows, int64_t cols) {
  VariableSpec v;
  v.set_name("dense");
  v.set_kind(VARIABLE_KIND_DENSE);
  v.mutable_shape()->add_dims(rows);
  v.mutable_shape()->add_dims(cols);
  return v;
}

VariableSpec Table(int64_t vocabulary, int64_t dim, int64_t budget = 0) {
  VariableSpec v;
  v.set_name("table");
  v.set_kind(VARIABLE_KIND_EMBEDDING);
  v.mutable_shape()->add_dims(vocabulary);
  v.mutable_shape()->add_dims(dim);
  v.mutable_embedding()->set_max_bytes_per_shard(budget);
  return v;
}

CreateVariablesRequest Request(int num_shards, std::initializer_list<VariableSpec> variables) {
  CreateVariablesRequest r;
  r.set_job_id("job-1");
  r.set_num_shards(num_shards);
  for (const VariableSpec& v : variables) *r.add_variables() = v;
  return r;
}

TEST(PlanShardMemoryTest, CountsDenseWholeFixedTablesByShareAndBudgets) {
  // Dense 10x10 with one slot: 800 bytes. Fixed 10 rows of 4 over 3
  // shards: 4 rows here, 128 bytes. Dynamic with a budget: 1000.
  absl::StatusOr<ShardMemoryPlan> plan =
      PlanShardMemory(Request(3, {Dense(10, 10), Table(10, 4), Table(0, 4, 1000)}), 1, 0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->bytes, 800 + 128 + 1000);
  EXPECT_EQ(plan->table_budgets, (std::vector<int64_t>{0, 0, 0}));
}

TEST(PlanShardMemoryTest, ARequestOverTheLimitNamesBothFiguresAndTheFlag) {
  absl::StatusOr<ShardMemoryPlan> plan = PlanShardMemory(Request(1, {Dense(1024, 1024)}), 1, 4 << 20);
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(plan.status().message(),
            "the variables of job job-1 need 8 MiB (8388608 bytes) on this parameter server "
            "(values and optimizer slots); it allows 4 MiB (4194304 bytes) (--max_variable_mb)");
}

TEST(PlanShardMemoryTest, AgreedSyncRoundsCountOneStagedDenseGradientPerWorker) {
  CreateVariablesRequest r = Request(2, {Dense(10, 10), Table(0, 4, 1000)});
  r.set_num_workers(3);
  r.set_rounds_agreed(true);
  absl::StatusOr<ShardMemoryPlan> plan = PlanShardMemory(r, 1, 0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 100 dense floats staged for each of 3 workers; the table's rows are not
  // counted.
  EXPECT_EQ(plan->staged_bytes, 3 * 400);
  EXPECT_EQ(plan->bytes, 800 + 1000 + 3 * 400);
  plan = PlanShardMemory(r, 1, 2000);
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(plan.status().message(),
                                "and 0 MiB (1200 bytes) of gradients staged for agreed sync "
                                "rounds, one push per worker"))
      << plan.status();
  r.set_rounds_agreed(false);
  EXPECT_EQ(PlanShardMemory(r, 1, 0)->staged_bytes, 0);
}

TEST(PlanShardMemoryTest, UnbudgetedDynamicTablesShareWhatTheRestLeaves) {
  absl::StatusOr<ShardMemoryPlan> plan =
      PlanShardMemory(Request(2, {Dense(10, 10), Table(0, 4), Table(0, 8)}), 0, 10400);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 400 bytes of dense values leave 10000: 5000 each.
  EXPECT_EQ(plan->table_budgets, (std::vector<int64_t>{0, 5000, 5000}));
  EXPECT_EQ(plan->bytes, 10400);
}

TEST(PlanShardMemoryTest, WithoutALimitUnbudgetedTablesStayUnbounded) {
  absl::StatusOr<ShardMemoryPlan> plan = PlanShardMemory(Request(2, {Table(0, 4)}), 0, 0);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->table_budgets, (std::vector<int64_t>{0}));
}

TEST(PlanShardMemoryTest, NoRoomForOneRowOfAnUnbudgetedTableIsRefused) {
  absl::StatusOr<ShardMemoryPlan> plan =
      PlanShardMemory(Request(1, {Dense(1, 99), Table(0, 4)}), 0, 400);
  ASSERT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "--max_variable_mb")) << plan.status();
}

TEST(PlanShardMemoryTest, AbsurdShapesSaturateAndAreRefusedUnderALimit) {
  absl::StatusOr<ShardMemoryPlan> plan =
      PlanShardMemory(Request(1, {Dense(int64_t{1} << 40, int64_t{1} << 40)}), 2, 1 << 30);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace pstrain
