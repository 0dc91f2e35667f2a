#include "client/train_local_command.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/data/test_files.h"
#include "gflags/gflags.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

DECLARE_string(output);
DECLARE_int64(max_steps);

namespace pstrain {
namespace {

std::string WriteSpec(const std::string& name, const std::string& stop) {
  const std::string dir = testing_util::WriteToyImageDataset(300, 90);
  return testing_util::WriteTestFile(name, absl::StrCat(R"(
    model { mlp { hidden_units: [16] } }
    train_data { fashion_mnist { dir: ")",
                                                        dir, R"(" } batch_size: 20 }
    eval_data { fashion_mnist { dir: ")",
                                                        dir, R"(" } batch_size: 45 }
    optimizer { adam {} learning_rate: 0.01 }
    checkpoint { model_dir: "/tmp/unused" }
  )",
                                                        stop));
}

class TrainLocalCommandTest : public ::testing::Test {
 protected:
  void TearDown() override {
    FLAGS_output = "text";
    FLAGS_max_steps = 0;
  }
};

TEST_F(TrainLocalCommandTest, PrintsOneJsonObject) {
  FLAGS_output = "json";
  FLAGS_max_steps = 40;  // the spec has no stop condition of its own
  const std::string spec = WriteSpec("job.pbtxt", "");
  ::testing::internal::CaptureStdout();
  const int code = RunTrainLocalCommand({spec});
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(code, 0) << out;
  google::protobuf::Struct json;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &json).ok()) << out;
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

}  // namespace
}  // namespace pstrain
