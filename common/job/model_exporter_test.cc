#include "common/job/model_exporter.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/data/test_files.h"
#include "common/export/export_versions.h"
#include "common/export/testing/trained_model.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::ExportSourceOf;
using testing_util::NewTestDir;
using testing_util::TrainedModel;
using testing_util::TrainModel;

// An MLP on toy images exporting to `export_dir`, ranked by loss.
JobSpec Spec(const std::string& export_dir, int exports_to_keep) {
  const std::string data = testing_util::WriteToyImageDataset(100, 30);
  auto raw = ParseJobSpecText(absl::StrCat(R"(
    model { mlp { hidden_units: [4] } }
    train_data { fashion_mnist { dir: ")",
                                           data, R"(" } batch_size: 20 }
    eval_data { fashion_mnist { dir: ")",
                                           data, R"(" } batch_size: 30 }
    stop { max_steps: 100 }
    checkpoint { model_dir: "/tmp/unused" }
    eval { best_metric: "loss" }
    export { strategy: EXPORT_STRATEGY_BEST export_dir: ")",
                                           export_dir, R"(" exports_to_keep: )",
                                           exports_to_keep, " }"));
  EXPECT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

std::vector<int64_t> Versions(Env& env, const std::string& parent) {
  auto versions = ListExportVersions(env, parent);
  EXPECT_TRUE(versions.ok()) << versions.status();
  std::vector<int64_t> steps;
  if (versions.ok()) {
    for (const ExportVersion& version : *versions) steps.push_back(version.step);
  }
  return steps;
}

class ModelExporterTest : public testing::Test {
 protected:
  void SetUp() override {
    export_dir_ = JoinPath(NewTestDir(env_), "export");
    spec_ = Spec(export_dir_, 2);
    trained_ = TrainModel(spec_, 2);
  }

  // Exports the trained model as the checkpoint of `step` evaluated to
  // `loss`.
  ExportResult Export(ModelExporter& exporter, int64_t step, double loss, CheckpointKind kind) {
    ExportSource source = ExportSourceOf(trained_, spec_, step);
    source.metrics = {{"loss", loss}};
    auto result =
        exporter.Export(source, trained_.trainer->model(), *trained_.parameters, kind);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : ExportResult();
  }

  PosixEnv env_;
  std::string export_dir_;
  JobSpec spec_;
  TrainedModel trained_;
};

TEST_F(ModelExporterTest, ExportsEachImprovementAndKeepsTheNewestExportsToKeep) {
  auto exporter = ModelExporter::Create(env_, spec_);
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  EXPECT_EQ(Export(**exporter, 10, 0.9, CheckpointKind::kPeriodic).best_path,
            JoinPath(export_dir_, "best/10"));
  // Worse: not exported.
  EXPECT_EQ(Export(**exporter, 20, 0.95, CheckpointKind::kPeriodic).best_path, "");
  EXPECT_NE(Export(**exporter, 30, 0.5, CheckpointKind::kPeriodic).best_path, "");
  EXPECT_NE(Export(**exporter, 40, 0.4, CheckpointKind::kPeriodic).best_path, "");
  const ExportResult last = Export(**exporter, 50, 0.6, CheckpointKind::kFinal);
  EXPECT_EQ(last.best_path, "");
  EXPECT_EQ(last.final_path, JoinPath(export_dir_, "final/50"));
  // exports_to_keep 2: best/10 went when best/40 came.
  EXPECT_EQ(Versions(env_, JoinPath(export_dir_, "best")), (std::vector<int64_t>{30, 40}));
  EXPECT_EQ(Versions(env_, JoinPath(export_dir_, "final")), (std::vector<int64_t>{50}));
}

TEST_F(ModelExporterTest, TheBestSoFarOutlivesTheExporter) {
  {
    auto first = ModelExporter::Create(env_, spec_);
    ASSERT_TRUE(first.ok()) << first.status();
    Export(**first, 100, 0.3, CheckpointKind::kFinal);
  }
  // A second run into the same export_dir (a restarted evaluator, a job
  // trained again) exports under best/ only what beats 0.3, and its final
  // exports count against the same exports_to_keep.
  auto second = ModelExporter::Create(env_, spec_);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->policy().best_value(), 0.3);
  EXPECT_EQ(Export(**second, 20, 0.4, CheckpointKind::kPeriodic).best_path, "");
  EXPECT_EQ(Export(**second, 40, 0.35, CheckpointKind::kFinal).best_path, "");
  Export(**second, 60, 0.2, CheckpointKind::kFinal);
  EXPECT_EQ(Versions(env_, JoinPath(export_dir_, "best")), (std::vector<int64_t>{60, 100}));
  EXPECT_EQ(Versions(env_, JoinPath(export_dir_, "final")), (std::vector<int64_t>{60, 100}));
}

}  // namespace
}  // namespace pstrain
