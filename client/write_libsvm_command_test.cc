// `pstrain write-libsvm` as a user runs it: the files it writes read back
// through the data specs it prints, and bad input is refused with exit code
// 2 and a message saying what is wrong.

#include "client/write_libsvm_command.h"

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/data/libsvm_reader.h"
#include "common/data/test_files.h"
#include "gflags/gflags.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "protos/job.pb.h"

DECLARE_string(libsvm_dir);
DECLARE_bool(libsvm_gzip);

namespace pstrain {
namespace {

constexpr char kClicksSpec[] = R"pb(
  model { logistic_regression {} }
  train_data { synthetic_clicks { num_examples: 2000 num_fields: 3 seed: 9 } }
  eval_data { synthetic_clicks { num_examples: 500 num_fields: 3 seed: 9 } }
  stop { max_steps: 10 }
  checkpoint { model_dir: "/tmp/unused" }
)pb";

class WriteLibsvmCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/write_libsvm";
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    FLAGS_libsvm_dir = "";
    FLAGS_libsvm_gzip = false;
  }

  // Runs the command; its exit code. *out, *err: what it printed.
  int Run(const std::vector<std::string>& args, std::string* out, std::string* err) {
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int code = RunWriteLibsvmCommand(args);
    *out = ::testing::internal::GetCapturedStdout();
    *err = ::testing::internal::GetCapturedStderr();
    return code;
  }

  std::string dir_;
};

TEST_F(WriteLibsvmCommandTest, WritesBothSetsAndPrintsSpecsThatReadThemBack) {
  for (const bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    FLAGS_libsvm_dir = dir_;
    FLAGS_libsvm_gzip = gzip;
    std::string out, err;
    ASSERT_EQ(Run({testing_util::WriteTestFile("clicks.pbtxt", kClicksSpec)}, &out, &err), 0)
        << err;
    const std::string suffix = gzip ? ".libsvm.gz" : ".libsvm";
    EXPECT_NE(err.find("wrote 2000 examples to " + dir_ + "/train" + suffix), std::string::npos)
        << err;
    EXPECT_NE(err.find("wrote 500 examples to " + dir_ + "/eval" + suffix), std::string::npos)
        << err;

    const std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
    ASSERT_EQ(lines.size(), 2u) << out;
    const int64_t expected_examples[] = {2000, 500};
    for (size_t i = 0; i < lines.size(); ++i) {
      // "train_data { libsvm {...} }": a JobSpec field, so parse it as one.
      JobSpec spec;
      ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(lines[i], &spec)) << lines[i];
      const DataSpec& data = i == 0 ? spec.train_data() : spec.eval_data();
      ASSERT_TRUE(data.has_libsvm()) << lines[i];
      EXPECT_EQ(data.libsvm().num_features(), 3000);  // 3 fields of 1000 ids
      auto read = LoadLibsvm(data.libsvm());
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_EQ((*read)->info().num_examples, expected_examples[i]);
      EXPECT_EQ((*read)->info().sparse_dim, 3000);
    }
  }
}

TEST_F(WriteLibsvmCommandTest, BadUsageIsExitCodeTwoWithTheReason) {
  std::string out, err;
  EXPECT_EQ(Run({}, &out, &err), 2);
  EXPECT_NE(err.find("expected one argument, the job spec file"), std::string::npos) << err;

  const std::string spec = testing_util::WriteTestFile("clicks.pbtxt", kClicksSpec);
  EXPECT_EQ(Run({spec}, &out, &err), 2);
  EXPECT_NE(err.find("--libsvm_dir is required"), std::string::npos) << err;

  FLAGS_libsvm_dir = dir_;
  EXPECT_EQ(Run({dir_ + "/no_such_spec.pbtxt"}, &out, &err), 2);
  EXPECT_NE(err.find("no_such_spec.pbtxt"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir_)) << "nothing is written for a refused spec";
}

TEST_F(WriteLibsvmCommandTest, AnInvalidSpecOrUnreadableDataIsRefusedNamingIt) {
  FLAGS_libsvm_dir = dir_;
  std::string out, err;
  const std::string invalid = testing_util::WriteTestFile("invalid.pbtxt", R"pb(
    model { logistic_regression {} }
    train_data {
      synthetic_clicks {}
      batch_size: -4
    }
    stop { max_steps: 10 }
    checkpoint { model_dir: "/tmp/unused" }
  )pb");
  EXPECT_EQ(Run({invalid}, &out, &err), 2);
  EXPECT_NE(err.find("train_data.batch_size"), std::string::npos) << err;

  const std::string missing = testing_util::WriteTestFile("missing.pbtxt", R"pb(
    model { logistic_regression {} }
    train_data { synthetic_clicks {} }
    eval_data { libsvm { path: "/no/such/file.libsvm" } }
    stop { max_steps: 10 }
    checkpoint { model_dir: "/tmp/unused" }
  )pb");
  EXPECT_EQ(Run({missing}, &out, &err), 2);
  EXPECT_NE(err.find("eval_data: "), std::string::npos) << err;
  EXPECT_NE(err.find("/no/such/file.libsvm"), std::string::npos) << err;
  // The training set was not written either: both are read first.
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/train.libsvm"));
  EXPECT_TRUE(out.empty()) << out;
}

}  // namespace
}  // namespace pstrain
