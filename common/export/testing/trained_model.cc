#include "common/export/testing/trained_model.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace testing_util {

TrainedModel TrainModel(const JobSpec& spec, int64_t steps) {
  LocalTrainerOptions options;
  options.max_steps = steps;
  auto trainer = LocalTrainer::Create(spec, options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  EXPECT_TRUE((*trainer)->Run().ok());
  auto parameters =
      ModelParameters::Create((*trainer)->model().Variables(), spec.training().seed());
  EXPECT_TRUE(parameters.ok()) << parameters.status();
  const VariableStore& store = (*trainer)->variables();
  for (const VariableDef& def : (*parameters)->definitions()) {
    const std::string& name = def.spec.name();
    if (def.spec.kind() == VARIABLE_KIND_EMBEDDING) {
      EmbeddingTableValues* table = (*parameters)->mutable_table(name);
      const int64_t ids =
          table->vocabulary() > 0 ? table->vocabulary() : (*trainer)->train_info().sparse_dim;
      for (int64_t id = 0; id < ids; ++id) {
        absl::StatusOr<std::vector<float>> row = store.Row(name, id);
        if (!row.ok()) continue;  // never read in training
        row->resize(table->dim());
        EXPECT_TRUE(table->Set(id, *row).ok());
      }
      EXPECT_GT(table->num_rows(), 0);
    } else {
      const Tensor* value = store.dense(name);
      std::memcpy((*parameters)->mutable_dense(name)->raw_data(), value->raw_data(),
                  value->num_bytes());
    }
  }
  return {std::move(trainer).value(), std::move(parameters).value()};
}

std::string NewTestDir(Env& env) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = absl::StrCat(info->test_suite_name(), ".", info->name());
  std::replace(name.begin(), name.end(), '/', '_');  // parameterized tests' names
  const std::string dir = JoinPath(::testing::TempDir(), name);
  if (*PathExists(env, dir)) {
    EXPECT_TRUE(RemoveTree(env, dir).ok());
  }
  EXPECT_TRUE(CreateDirs(env, dir).ok());
  return dir;
}

ExportSource ExportSourceOf(const TrainedModel& trained, const JobSpec& spec, int64_t step) {
  ExportSource source;
  source.spec = spec;
  source.dataset = trained.trainer->train_info();
  source.global_step = step;
  source.job_id = "job-1";
  source.metrics = {{"loss", 0.5}};
  source.source_checkpoint = absl::StrCat("/tmp/model/ckpt-", step);
  return source;
}

}  // namespace testing_util
}  // namespace pstrain
