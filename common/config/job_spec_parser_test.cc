#include "common/config/job_spec_parser.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kTextSpec[] = R"pb(
  name: "mlp"
  model { mlp { hidden_units: [ 64, 32 ] } }
  train_data {
    fashion_mnist {}
    batch_size: 64
  }
  optimizer {
    adam { beta1: 0.8 }
    learning_rate: 0.001
  }
)pb";

constexpr char kJsonSpec[] = R"({
  "name": "mlp",
  "model": {"mlp": {"hiddenUnits": ["64", 32]}},
  "train_data": {"fashionMnist": {}, "batchSize": 64},
  "optimizer": {"adam": {"beta1": 0.8}, "learningRate": 0.001},
  "training": {"updateMode": "UPDATE_MODE_SYNC"}
})";

std::string WriteFile(const std::string& name, const std::string& contents) {
  const std::string path = testing::TempDir() + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  EXPECT_TRUE(out.good()) << path;
  return path;
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

void ExpectTextSpec(const JobSpec& spec) {
  EXPECT_EQ(spec.name(), "mlp");
  ASSERT_TRUE(spec.model().has_mlp());
  EXPECT_THAT(spec.model().mlp().hidden_units(), testing::ElementsAre(64, 32));
  EXPECT_TRUE(spec.train_data().has_fashion_mnist());
  EXPECT_EQ(spec.train_data().batch_size(), 64);
  EXPECT_FLOAT_EQ(spec.optimizer().adam().beta1(), 0.8f);
  EXPECT_FALSE(spec.optimizer().adam().has_beta2());  // defaults are not filled here
  EXPECT_FLOAT_EQ(spec.optimizer().learning_rate(), 0.001f);
}

TEST(ParseJobSpecTextTest, ParsesTextFormat) {
  absl::StatusOr<JobSpec> spec = ParseJobSpecText(kTextSpec);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ExpectTextSpec(*spec);
}

TEST(ParseJobSpecTextTest, ErrorsCarryLineAndColumn) {
  absl::StatusOr<JobSpec> spec =
      ParseJobSpecText("name: \"x\"\nmode: JOB_MODE_TRAIN\n  bogus: 3\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), StartsWith("<job spec>:3:8: "));
  EXPECT_THAT(Message(spec.status()), HasSubstr("no field named \"bogus\""));

  spec = ParseJobSpecText("model {\n  mlp { hidden_units: 1 }\n  cnn {}\n}\n", "spec.pbtxt");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(Message(spec.status()), StartsWith("spec.pbtxt:3:"));
  EXPECT_THAT(Message(spec.status()), HasSubstr("oneof"));

  spec = ParseJobSpecText("name: \"a\"\nname: \"b\"\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(Message(spec.status()), StartsWith("<job spec>:2:"));
  EXPECT_THAT(Message(spec.status()), HasSubstr("specified multiple times"));

  spec = ParseJobSpecText("optimizer {\n  learning_rate: fast\n}\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(Message(spec.status()), StartsWith("<job spec>:2:18: "));

  spec = ParseJobSpecText("mode: JOB_MODE_TRAINING\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(Message(spec.status()), HasSubstr("JOB_MODE_TRAINING"));
}

TEST(ParseJobSpecJsonTest, ParsesProto3Json) {
  absl::StatusOr<JobSpec> spec = ParseJobSpecJson(kJsonSpec);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ExpectTextSpec(*spec);
  EXPECT_EQ(spec->training().update_mode(), UPDATE_MODE_SYNC);
}

TEST(ParseJobSpecJsonTest, RefusesUnknownFieldsNamingThem) {
  absl::StatusOr<JobSpec> spec = ParseJobSpecJson(R"({"name": "x", "learningRate": 0.1})");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), HasSubstr("learningRate"));

  spec = ParseJobSpecJson(R"({"model": {"mlp": {"hidenUnits": [1]}}})", "job.json");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(Message(spec.status()), StartsWith("job.json: "));
  EXPECT_THAT(Message(spec.status()), HasSubstr("hidenUnits"));
  EXPECT_THAT(Message(spec.status()), HasSubstr("model.mlp"));
}

TEST(ParseJobSpecJsonTest, RefusesBadJsonOnOneLine) {
  for (const char* json : {"{\"name\": }", "", "{\"mode\": \"JOB_MODE_TRAINING\"}",
                           "{\"trainData\": {\"batchSize\": \"many\"}}"}) {
    absl::StatusOr<JobSpec> spec = ParseJobSpecJson(json);
    ASSERT_FALSE(spec.ok()) << json;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << json;
    EXPECT_THAT(Message(spec.status()), Not(HasSubstr("\n"))) << json;
  }
}

TEST(LoadJobSpecFileTest, LoadsTextFormatByExtension) {
  for (const char* name : {"load.pbtxt", "load.textproto", "load.txt", "LOAD.PBTXT"}) {
    absl::StatusOr<JobSpec> spec = LoadJobSpecFile(WriteFile(name, kTextSpec));
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.status();
    ExpectTextSpec(*spec);
  }
}

TEST(LoadJobSpecFileTest, LoadsJsonByExtension) {
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(WriteFile("load.json", kJsonSpec));
  ASSERT_TRUE(spec.ok()) << spec.status();
  ExpectTextSpec(*spec);
  // JSON is not text format, nor the other way round.
  EXPECT_FALSE(LoadJobSpecFile(WriteFile("json_as_text.pbtxt", kJsonSpec)).ok());
  EXPECT_FALSE(LoadJobSpecFile(WriteFile("text_as_json.json", kTextSpec)).ok());
}

TEST(LoadJobSpecFileTest, TextErrorsNameFileLineAndColumn) {
  const std::string path = WriteFile("job.pbtxt", "name: \"x\"\nmodel {\n    mlpp {}\n}\n");
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  // Protobuf places an unknown field at the token after its name.
  EXPECT_THAT(Message(spec.status()), StartsWith(path + ":3:10: "));
  EXPECT_THAT(Message(spec.status()), HasSubstr("mlpp"));
}

TEST(LoadJobSpecFileTest, JsonErrorsNameFileAndField) {
  const std::string path = WriteFile("job.json", R"({"name": "x", "modle": {}})");
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), StartsWith(path + ": "));
  EXPECT_THAT(Message(spec.status()), HasSubstr("modle"));
}

TEST(LoadJobSpecFileTest, RefusesOtherExtensionsNamingThem) {
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(WriteFile("job.yaml", "name: x\n"));
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), HasSubstr("has extension \".yaml\""));

  spec = LoadJobSpecFile(WriteFile("jobspec", kTextSpec));
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(Message(spec.status()), HasSubstr("has no extension"));

  // The extension is checked before the file is read.
  spec = LoadJobSpecFile("/nonexistent/job.proto");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LoadJobSpecFileTest, MissingFileIsNotFoundNamingThePath) {
  const std::string path = testing::TempDir() + "missing.pbtxt";
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(spec.status()), HasSubstr(path));
}

TEST(LoadJobSpecFileTest, UnreadableFileIsPermissionDenied) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads every file";
  const std::string path = WriteFile("unreadable.pbtxt", kTextSpec);
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(Message(spec.status()), HasSubstr(path));
}

TEST(LoadJobSpecFileTest, RefusesDirectoriesAndHugeFiles) {
  const std::string dir = testing::TempDir() + "dir.pbtxt";
  mkdir(dir.c_str(), 0755);
  absl::StatusOr<JobSpec> spec = LoadJobSpecFile(dir);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), HasSubstr(dir));

  const std::string huge = WriteFile("huge.pbtxt", std::string(kMaxJobSpecFileBytes + 1, ' '));
  spec = LoadJobSpecFile(huge);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), HasSubstr("is larger than"));
}

}  // namespace
}  // namespace pstrain
