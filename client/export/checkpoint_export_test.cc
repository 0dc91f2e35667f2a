#include "client/export/checkpoint_export.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/export/export_command.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/data/test_files.h"
#include "common/export/exported_model.h"
#include "common/export/testing/parameters_checkpoint.h"
#include "common/summary/scalar_jsonl.h"
#include "common/training/local_trainer.h"
#include "gflags/gflags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

DECLARE_string(to);
DECLARE_int64(step);

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A tiny MLP trained in this process on a toy image set; its spec names a
// model_dir under the test's folder.
class CheckpointExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = NewTestDir(env_);
    model_dir_ = JoinPath(dir_, "model");
    const std::string data = testing_util::WriteToyImageDataset(120, 30);
    auto raw = ParseJobSpecText(absl::StrCat(R"(
      model { mlp { hidden_units: [8] } }
      train_data { fashion_mnist { dir: ")",
                                             data, R"(" } batch_size: 20 }
      eval_data { fashion_mnist { dir: ")",
                                             data, R"(" } batch_size: 30 }
      optimizer { adam {} learning_rate: 0.02 }
      training { seed: 7 }
      stop { max_steps: 30 }
      checkpoint { model_dir: ")",
                                             model_dir_, R"(" }
    )"));
    ASSERT_TRUE(raw.ok()) << raw.status();
    auto spec = PrepareJobSpec(*raw);
    ASSERT_TRUE(spec.ok()) << spec.status();
    spec_ = *spec;
    auto trainer = LocalTrainer::Create(spec_, {});
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    ASSERT_TRUE((*trainer)->Run().ok());
    auto parameters = ModelParameters::Create((*trainer)->model().Variables(), 7);
    ASSERT_TRUE(parameters.ok()) << parameters.status();
    for (const VariableDef& def : (*parameters)->definitions()) {
      const Tensor* value = (*trainer)->variables().dense(def.spec.name());
      ASSERT_NE(value, nullptr) << def.spec.name();
      std::memcpy((*parameters)->mutable_dense(def.spec.name())->raw_data(), value->raw_data(),
                  value->num_bytes());
    }
    trained_ = std::move(parameters).value();
  }

  void WriteCheckpoint(int64_t step) {
    auto written = WriteParametersCheckpoint(env_, model_dir_, step, *trained_, /*num_shards=*/2,
                                             /*final=*/false, /*num_slots=*/1, spec_);
    ASSERT_TRUE(written.ok()) << written.status();
  }

  PosixEnv env_;
  std::string dir_;
  std::string model_dir_;
  JobSpec spec_;
  std::unique_ptr<ModelParameters> trained_;
};

TEST_F(CheckpointExportTest, ExportsTheNewestCheckpointWithItsEvalMetrics) {
  WriteCheckpoint(10);
  WriteCheckpoint(30);
  ASSERT_TRUE(CreateDirs(env_, JoinPath(model_dir_, "eval")).ok());
  ASSERT_TRUE(WriteTestFile(env_, JoinPath(model_dir_, "eval/scalars.jsonl"),
                            FormatScalarJsonLine({10, 1.0, "accuracy", 0.5}) +
                                FormatScalarJsonLine({30, 2.0, "accuracy", 0.75}) +
                                FormatScalarJsonLine({30, 2.0, "loss", 0.625}))
                  .ok());
  const std::string to = JoinPath(dir_, "exported");

  auto exported = ExportCheckpoint(env_, model_dir_, std::nullopt, to);

  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->step, 30);
  EXPECT_EQ(exported->checkpoint_dir, CheckpointDir(model_dir_, 30));
  EXPECT_TRUE(exported->skipped.empty());
  auto model = LoadExportedModel(env_, to);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->global_step(), 30);
  EXPECT_EQ((*model)->manifest().job_id(), "job-1");
  EXPECT_EQ((*model)->manifest().metrics().at("accuracy"), 0.75);
  EXPECT_EQ((*model)->manifest().metrics().at("loss"), 0.625);
  EXPECT_EQ((*model)->dataset().dense_dim, 36);
  EXPECT_EQ((*model)->spec().checkpoint().model_dir(), model_dir_);
  // The same model as ONNX beside the weights, listed in the MANIFEST.
  ASSERT_TRUE((*model)->manifest().has_onnx_model()) << (*model)->manifest().onnx_omitted();
  EXPECT_TRUE(*PathExists(env_, JoinPath(to, "model.onnx")));
  // Every weight came through the two shards unchanged.
  for (const VariableDef& def : trained_->definitions()) {
    const Tensor* want = trained_->dense(def.spec.name());
    const Tensor* got = (*model)->parameters().dense(def.spec.name());
    ASSERT_NE(got, nullptr) << def.spec.name();
    ASSERT_EQ(got->num_bytes(), want->num_bytes());
    EXPECT_EQ(std::memcmp(got->raw_data(), want->raw_data(), want->num_bytes()), 0)
        << def.spec.name();
  }
}

TEST_F(CheckpointExportTest, PassesOverADamagedNewestCheckpoint) {
  WriteCheckpoint(10);
  WriteCheckpoint(30);
  ASSERT_TRUE(FlipBit(env_, JoinPath(CheckpointDir(model_dir_, 30), ShardFileName(1, 2)), 40).ok());

  auto exported = ExportCheckpoint(env_, model_dir_, std::nullopt, JoinPath(dir_, "e"));

  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->step, 10);
  ASSERT_EQ(exported->skipped.size(), 1u);
  EXPECT_EQ(exported->skipped[0].step, 30);
  EXPECT_TRUE(absl::IsDataLoss(exported->skipped[0].reason)) << exported->skipped[0].reason;
}

TEST_F(CheckpointExportTest, ExportsTheStepAskedFor) {
  WriteCheckpoint(10);
  WriteCheckpoint(30);
  auto exported = ExportCheckpoint(env_, model_dir_, 10, JoinPath(dir_, "e"));
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->step, 10);
  EXPECT_EQ(exported->manifest.global_step(), 10);
  EXPECT_TRUE(exported->manifest.metrics().empty());  // no eval summaries
}

TEST_F(CheckpointExportTest, AStepWithoutCheckpointListsTheStepsThereAre) {
  WriteCheckpoint(10);
  WriteCheckpoint(30);
  auto exported = ExportCheckpoint(env_, model_dir_, 20, JoinPath(dir_, "e"));
  EXPECT_TRUE(absl::IsNotFound(exported.status())) << exported.status();
  EXPECT_THAT(exported.status().message(), HasSubstr("no checkpoint of step 20"));
  EXPECT_THAT(exported.status().message(), HasSubstr("10, 30"));
  EXPECT_FALSE(*PathExists(env_, JoinPath(dir_, "e")));
}

TEST_F(CheckpointExportTest, ADamagedCheckpointAskedForIsDataLossNamingTheFile) {
  WriteCheckpoint(10);
  const std::string shard = JoinPath(CheckpointDir(model_dir_, 10), ShardFileName(0, 2));
  ASSERT_TRUE(FlipBit(env_, shard, 30).ok());
  auto exported = ExportCheckpoint(env_, model_dir_, 10, JoinPath(dir_, "e"));
  EXPECT_TRUE(absl::IsDataLoss(exported.status())) << exported.status();
  EXPECT_THAT(exported.status().message(), HasSubstr(ShardFileName(0, 2)));
  EXPECT_FALSE(*PathExists(env_, JoinPath(dir_, "e")));
}

TEST_F(CheckpointExportTest, RefusesAnExistingDestinationAndAnEmptyOrMissingModelDir) {
  WriteCheckpoint(10);
  ASSERT_TRUE(CreateDirs(env_, JoinPath(dir_, "taken")).ok());
  auto taken = ExportCheckpoint(env_, model_dir_, std::nullopt, JoinPath(dir_, "taken"));
  EXPECT_TRUE(absl::IsAlreadyExists(taken.status())) << taken.status();

  auto missing = ExportCheckpoint(env_, JoinPath(dir_, "nope"), std::nullopt, JoinPath(dir_, "e"));
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist"));

  ASSERT_TRUE(CreateDirs(env_, JoinPath(dir_, "empty")).ok());
  auto empty = ExportCheckpoint(env_, JoinPath(dir_, "empty"), std::nullopt, JoinPath(dir_, "e"));
  EXPECT_TRUE(absl::IsNotFound(empty.status())) << empty.status();
  EXPECT_THAT(empty.status().message(), HasSubstr("no complete checkpoint"));
}

TEST_F(CheckpointExportTest, ACheckpointWhoseDataIsGoneCannotBeSized) {
  JobSpec moved = spec_;
  moved.mutable_train_data()->mutable_fashion_mnist()->set_dir(JoinPath(dir_, "gone"));
  auto written = WriteParametersCheckpoint(env_, model_dir_, 5, *trained_, 1, false, 1, moved);
  ASSERT_TRUE(written.ok()) << written.status();
  auto exported = ExportCheckpoint(env_, model_dir_, std::nullopt, JoinPath(dir_, "e"));
  EXPECT_TRUE(absl::IsFailedPrecondition(exported.status())) << exported.status();
  EXPECT_THAT(exported.status().message(), HasSubstr("train_data"));
}

TEST_F(CheckpointExportTest, CommandExitCodes) {
  WriteCheckpoint(10);
  FLAGS_step = -1;
  FLAGS_to = "";
  EXPECT_EQ(RunExportCommand({model_dir_}), 2);  // --to missing
  FLAGS_to = JoinPath(dir_, "cli");
  EXPECT_EQ(RunExportCommand({}), 2);
  EXPECT_EQ(RunExportCommand({model_dir_, "extra"}), 2);
  EXPECT_EQ(RunExportCommand({model_dir_}), 0);
  EXPECT_TRUE(*PathExists(env_, JoinPath(FLAGS_to, "MANIFEST")));
  EXPECT_TRUE(*PathExists(env_, JoinPath(FLAGS_to, "model.onnx")));
  EXPECT_EQ(RunExportCommand({model_dir_}), 2);  // exists now
  FLAGS_to = JoinPath(dir_, "cli2");
  FLAGS_step = 99;
  EXPECT_EQ(RunExportCommand({model_dir_}), 2);  // no such step
  FLAGS_step = 10;
  ASSERT_TRUE(FlipBit(env_, JoinPath(CheckpointDir(model_dir_, 10), ShardFileName(1, 2)), 20).ok());
  EXPECT_EQ(RunExportCommand({model_dir_}), 1);  // damaged
  FLAGS_step = -1;
}

}  // namespace
}  // namespace pstrain
