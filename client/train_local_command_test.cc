#include "client/train_local_command.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_env.h"
#include "common/data/test_files.h"
#include "gflags/gflags.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

DECLARE_string(output);
DECLARE_int64(max_steps);
DECLARE_string(model_dir);

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// The toy image job; `rest` adds its stop condition, and may replace its
// checkpoint block.
std::string WriteSpec(const std::string& name, const std::string& rest,
                      const std::string& checkpoint = R"(checkpoint { model_dir: "/tmp/unused" })") {
  const std::string dir = testing_util::WriteToyImageDataset(300, 90);
  return testing_util::WriteTestFile(name, absl::StrCat(R"(
    model { mlp { hidden_units: [16] } }
    train_data { fashion_mnist { dir: ")",
                                                        dir, R"(" } batch_size: 20 }
    eval_data { fashion_mnist { dir: ")",
                                                        dir, R"(" } batch_size: 45 }
    optimizer { adam {} learning_rate: 0.01 }
  )",
                                                        checkpoint, "\n", rest));
}

// Runs train-local on `spec` with --output=json and parses what it prints
// into *json; fails the test on a non-zero exit or output that is not JSON.
void RunToJson(const std::string& spec, google::protobuf::Struct* json) {
  FLAGS_output = "json";
  ::testing::internal::CaptureStdout();
  const int code = RunTrainLocalCommand({spec});
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(code, 0) << out;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, json).ok()) << out;
}

class TrainLocalCommandTest : public ::testing::Test {
 protected:
  void TearDown() override {
    FLAGS_output = "text";
    FLAGS_max_steps = 0;
    FLAGS_model_dir = "";
  }
};

TEST_F(TrainLocalCommandTest, PrintsOneJsonObject) {
  FLAGS_max_steps = 40;  // the spec has no stop condition of its own
  google::protobuf::Struct json;
  ASSERT_NO_FATAL_FAILURE(RunToJson(WriteSpec("job.pbtxt", ""), &json));
  const auto& fields = json.fields();
  EXPECT_EQ(fields.at("state").string_value(), "SUCCEEDED");
  EXPECT_EQ(fields.at("global_step").number_value(), 40);
  EXPECT_GT(fields.at("examples_per_sec").number_value(), 0);
  EXPECT_GE(fields.at("accuracy").number_value(), 0.9);
  EXPECT_LT(fields.at("loss").number_value(), 0.5);
  EXPECT_EQ(fields.at("stop_reason").string_value(), "STOP_REASON_MAX_STEPS");
}

TEST_F(TrainLocalCommandTest, PrintsTextByDefault) {
  const std::string spec = WriteSpec("text.pbtxt", "stop { max_steps: 5 }");
  ::testing::internal::CaptureStdout();
  const int code = RunTrainLocalCommand({spec});
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("trained 5 steps (100 examples)"), std::string::npos) << out;
  EXPECT_NE(out.find("eval accuracy "), std::string::npos) << out;
}

// CSV feeds the models that read ids: a text column becomes one hashed id
// per line, and wide-and-deep learns what each city's ids mean. The click
// rate is 0.1 to 0.9 by city; a model blind to the city scores AUC 0.5.
TEST_F(TrainLocalCommandTest, WideAndDeepLearnsFromACsvTextColumn) {
  const char* cities[] = {"oslo", "lima", "pune", "kiev", "rome", "nara"};
  std::mt19937 random(3);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::string train = "id,city,age,clicked\n", test = train;
  for (int i = 0; i < 5000; ++i) {
    const int city = static_cast<int>(uniform(random) * 6);
    const bool clicked = uniform(random) < 0.1 + 0.16 * city;
    // Some ages missing, filled by the spec.
    const std::string age = i % 20 == 0 ? "" : absl::StrCat(uniform(random));
    absl::StrAppend(i < 4000 ? &train : &test, i, ",", cities[city], ",", age, ",", clicked ? 1 : 0,
                    "\n");
  }
  const std::string csv =
      R"(label: "clicked" categorical: "city" ignore: "id" fill_missing { column: "age" value: 0.5 })";
  const std::string spec = testing_util::WriteTestFile(
      "clicks_csv.pbtxt",
      absl::StrCat("model { wide_and_deep { embedding { dim: 4 } hidden_units: [8] } }\n",
                   "train_data { csv { path: \"", testing_util::WriteTestFile("train.csv", train),
                   "\" ", csv, " } batch_size: 64 }\n", "eval_data { csv { path: \"",
                   testing_util::WriteTestFile("test.csv", test), "\" ", csv,
                   " } batch_size: 500 }\n",
                   "optimizer { adam {} learning_rate: 0.01 } stop { max_steps: 600 }\n"
                   "eval { metrics: [\"auc\"] best_metric: \"auc\" }\n"
                   "checkpoint { model_dir: \"/tmp/unused\" }"));
  google::protobuf::Struct json;
  ASSERT_NO_FATAL_FAILURE(RunToJson(spec, &json));
  // The true model's AUC on such data is about 0.83.
  EXPECT_GT(json.fields().at("auc").number_value(), 0.78);
}

TEST_F(TrainLocalCommandTest, UsageAndSpecErrors) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunTrainLocalCommand({}), 2);
  EXPECT_EQ(RunTrainLocalCommand({"a.pbtxt", "b.pbtxt"}), 2);
  EXPECT_EQ(RunTrainLocalCommand({"/nonexistent/job.pbtxt"}), 2);
  const std::string no_stop = WriteSpec("no_stop.pbtxt", "");
  EXPECT_EQ(RunTrainLocalCommand({no_stop}), 2);
  FLAGS_output = "xml";
  EXPECT_EQ(RunTrainLocalCommand({no_stop}), 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("/nonexistent/job.pbtxt"), std::string::npos) << err;
  EXPECT_NE(err.find("max_steps"), std::string::npos) << err;
  EXPECT_NE(err.find("--output must be text or json"), std::string::npos) << err;
}

// train-local keeping its run in a model_dir whose checkpoints at chosen
// steps cannot be saved, as on a full disk: the checkpoint's folder cannot
// be put in place, so everything written of it must be removed again.
class TrainLocalCheckpointFailureTest : public TrainLocalCommandTest {
 protected:
  void SetUp() override {
    FLAGS_model_dir = JoinPath(::testing::TempDir(), "train_local_failures");
    RemoveTree(posix_, FLAGS_model_dir).IgnoreError();  // a run before
  }

  // A checkpoint every 10 steps (a progress report each), failing after 3
  // failed ones in a row.
  std::string Spec(int64_t max_steps) {
    return WriteSpec("failing.pbtxt",
                     absl::StrCat("training { steps_per_loop: 10 } stop { max_steps: ", max_steps,
                                  " }"),
                     "checkpoint { every_steps: 10 max_consecutive_failures: 3 }");
  }

  void DiskFullAt(int64_t step) {
    env_.FailOn(EnvOp::kRename, TemporaryCheckpointDir(FLAGS_model_dir, step),
                absl::ResourceExhaustedError("rename: No space left on device"));
  }

  // Runs the command; its exit code, with stdout and stderr.
  int Run(const std::string& spec, std::string* out, std::string* err) {
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int code = RunTrainLocalCommandWithEnv({spec}, env_);
    *out = ::testing::internal::GetCapturedStdout();
    *err = ::testing::internal::GetCapturedStderr();
    return code;
  }

  // What model_dir holds named ckpt-*, unfinished folders included.
  std::vector<std::string> Checkpoints() {
    std::vector<std::string> names;
    absl::StatusOr<std::vector<std::string>> entries = posix_.ListDir(FLAGS_model_dir);
    EXPECT_TRUE(entries.ok()) << entries.status();
    for (const std::string& entry : entries.value_or(std::vector<std::string>())) {
      if (absl::StartsWith(entry, "ckpt-")) names.push_back(entry);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  PosixEnv posix_;
  TestEnv env_{&posix_};
};

TEST_F(TrainLocalCheckpointFailureTest, WarnsTriesAgainAndFailsAfterTheLimitInARow) {
  FLAGS_output = "json";
  for (int64_t step : {20, 30, 50, 60, 70}) DiskFullAt(step);
  std::string out, err;
  EXPECT_EQ(Run(Spec(200), &out, &err), 1) << err;

  // Each failure is a warning, and training goes on to the next due step.
  EXPECT_THAT(err, HasSubstr("warning: could not save ckpt-20 (1 in a row of at most 3): "
                             "rename: No space left on device; will try again at step 30\n"));
  EXPECT_THAT(err, HasSubstr("warning: could not save ckpt-30 (2 in a row of at most 3): "));
  // ckpt-40 was saved: the count started again.
  EXPECT_THAT(err, HasSubstr("could not save ckpt-50 (1 in a row of at most 3): "));
  EXPECT_THAT(err, HasSubstr("could not save ckpt-60 (2 in a row of at most 3): "));
  EXPECT_THAT(err, HasSubstr("could not save ckpt-70 (3 in a row of at most 3): "
                             "rename: No space left on device; the run fails\n"));
  EXPECT_THAT(err, Not(HasSubstr("step 80 ")));
  // The cluster's reason, and what is left to go on from.
  EXPECT_THAT(err, HasSubstr("pstrain train-local: failed: 3 checkpoints failed in a row "
                             "(checkpoint.max_consecutive_failures 3), the last, ckpt-70: "
                             "rename: No space left on device; make room in "
                             "checkpoint.model_dir or fix what the error names; the last "
                             "checkpoint saved: " +
                             CheckpointDir(FLAGS_model_dir, 40)));
  EXPECT_THAT(out, HasSubstr("\"state\": \"FAILED\""));
  EXPECT_THAT(out, HasSubstr("\"global_step\": 70"));
  EXPECT_THAT(out, HasSubstr("\"stop_reason\": \"STOP_REASON_CHECKPOINT_FAILURES\""));
  EXPECT_THAT(out, HasSubstr("\"reason\": \"3 checkpoints failed in a row"));

  // Nothing of a failed checkpoint is left, no final one was written, and
  // the saved ones verify.
  env_.ClearFailures();
  EXPECT_THAT(Checkpoints(), ElementsAre("ckpt-10", "ckpt-40"));
  absl::StatusOr<CheckpointManifest> last = VerifyCheckpoint(posix_, CheckpointDir(FLAGS_model_dir, 40));
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->global_step(), 40);
  EXPECT_FALSE(last->final());
}

TEST_F(TrainLocalCheckpointFailureTest, AFailedFinalCheckpointFailsTheRun) {
  DiskFullAt(30);  // the periodic one at the last step, then the final one
  std::string out, err;
  EXPECT_EQ(Run(Spec(30), &out, &err), 1) << err;
  EXPECT_THAT(err, HasSubstr("warning: could not save ckpt-30 (1 in a row of at most 3): "));
  EXPECT_THAT(err, HasSubstr("pstrain train-local: cannot keep the run in " + FLAGS_model_dir +
                             ": the final checkpoint, ckpt-30, failed: rename: No space left "
                             "on device"));
  env_.ClearFailures();
  EXPECT_THAT(Checkpoints(), ElementsAre("ckpt-10", "ckpt-20"));
  EXPECT_TRUE(VerifyCheckpoint(posix_, CheckpointDir(FLAGS_model_dir, 20)).ok());
}

TEST_F(TrainLocalCheckpointFailureTest, AFinalCheckpointThatFailsAtASavedStepLeavesItIntact) {
  // ckpt-30 is saved; making it the final one cannot write its MANIFEST.
  env_.FailOn(EnvOp::kNewWritableFile, JoinPath(CheckpointDir(FLAGS_model_dir, 30), "MANIFEST.tmp"),
              absl::ResourceExhaustedError("No space left on device"));
  std::string out, err;
  EXPECT_EQ(Run(Spec(30), &out, &err), 1) << err;
  EXPECT_THAT(err, HasSubstr("the final checkpoint, ckpt-30, failed: "));
  env_.ClearFailures();
  EXPECT_THAT(Checkpoints(), ElementsAre("ckpt-10", "ckpt-20", "ckpt-30"));
  absl::StatusOr<CheckpointManifest> kept =
      VerifyCheckpoint(posix_, CheckpointDir(FLAGS_model_dir, 30));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_FALSE(kept->final());

  // Without the failure the same checkpoint becomes the final one.
  RemoveTree(posix_, FLAGS_model_dir).IgnoreError();
  EXPECT_EQ(Run(Spec(30), &out, &err), 0) << err;
  absl::StatusOr<CheckpointManifest> final =
      VerifyCheckpoint(posix_, CheckpointDir(FLAGS_model_dir, 30));
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_TRUE(final->final());
}

}  // namespace
}  // namespace pstrain
