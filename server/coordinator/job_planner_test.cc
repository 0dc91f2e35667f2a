#include "server/coordinator/job_planner.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/data/test_files.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

JobSpec Spec(const std::string& text) {
  JobSpec raw;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &raw)) << text;
  absl::StatusOr<JobSpec> spec = PrepareJobSpec(raw);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.value_or(raw);
}

TEST(ModelJobPlannerTest, CountsRecordsAndListsTheModelsVariables) {
  const std::string dir =
      testing_util::WriteToyImageDataset(/*train_count=*/120, /*test_count=*/30);
  ModelJobPlanner planner;
  absl::StatusOr<JobPlan> plan = planner.Plan(
      Spec(absl::StrCat(R"pb(
                          mode: JOB_MODE_TRAIN
                          model { mlp { hidden_units: 8 } }
                          train_data { fashion_mnist { dir: ")pb",
                        dir, R"pb(" } }
                                  stop { max_steps: 10 }
                                  checkpoint { model_dir: "/tmp/pstrain/planner" })pb")));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->num_records, 120);
  ASSERT_FALSE(plan->variables.empty());
  for (const VariableSpec& v : plan->variables) {
    EXPECT_EQ(v.kind(), VARIABLE_KIND_DENSE) << v.name();
  }
  EXPECT_NE(plan->description.find("mlp"), std::string::npos) << plan->description;
}

TEST(ModelJobPlannerTest, SparseModelsDeclareEmbeddingTables) {
  ModelJobPlanner planner;
  absl::StatusOr<JobPlan> plan = planner.Plan(Spec(R"pb(
    mode: JOB_MODE_TRAIN
    model {
      wide_and_deep {
        embedding { dim: 4 }
        hidden_units: 8
      }
    }
    train_data { synthetic_clicks { num_examples: 300 num_fields: 3 vocabulary_per_field: 20 } }
    stop { max_steps: 10 }
    checkpoint { model_dir: "/tmp/pstrain/planner" })pb"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->num_records, 300);
  int tables = 0;
  for (const VariableSpec& v : plan->variables) tables += v.kind() == VARIABLE_KIND_EMBEDDING;
  EXPECT_GE(tables, 1);
}

TEST(ModelJobPlannerTest, MissingDataNamesTheField) {
  ModelJobPlanner planner;
  absl::StatusOr<JobPlan> plan = planner.Plan(Spec(R"pb(
    mode: JOB_MODE_TRAIN
    model { linear_regression {} }
    train_data { csv { path: "/nonexistent/pstrain/data.csv" } }
    stop { max_steps: 10 }
    checkpoint { model_dir: "/tmp/pstrain/planner" })pb"));
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("train_data"), std::string::npos) << plan.status();
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
