// Loads every job spec under examples/ as a user would submit it, so that an
// example never drifts out of date with the JobSpec rules.

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

std::vector<std::string> ExampleJobSpecs() {
  // Bazel lays out the test's data under $TEST_SRCDIR/<workspace>/.
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  EXPECT_NE(srcdir, nullptr);
  EXPECT_NE(workspace, nullptr);
  if (srcdir == nullptr || workspace == nullptr) return {};
  const std::filesystem::path examples = std::filesystem::path(srcdir) / workspace / "examples";
  std::vector<std::string> paths;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(examples, error)) {
    if (absl::EndsWith(entry.path().filename().string(), ".pbtxt")) {
      paths.push_back(entry.path().string());
    }
  }
  EXPECT_FALSE(error) << examples << ": " << error.message();
  return paths;
}

TEST(ExampleJobSpecsTest, EveryExampleLoadsAndValidates) {
  const std::vector<std::string> paths = ExampleJobSpecs();
  ASSERT_FALSE(paths.empty()) << "no examples/*.pbtxt in the runfiles";
  for (const std::string& path : paths) {
    absl::StatusOr<JobSpec> raw = LoadJobSpecFile(path);
    ASSERT_TRUE(raw.ok()) << raw.status();
    absl::StatusOr<JobSpec> spec = PrepareJobSpec(*raw);
    EXPECT_TRUE(spec.ok()) << path << ": " << spec.status();
  }
}

TEST(ExampleJobSpecsTest, FashionMnistMlpSaysWhatItsCommentsSay) {
  const std::vector<std::string> paths = ExampleJobSpecs();
  std::string mlp_path;
  for (const std::string& path : paths) {
    if (absl::EndsWith(path, "/fashion_mnist_mlp.pbtxt")) mlp_path = path;
  }
  ASSERT_FALSE(mlp_path.empty());
  absl::StatusOr<JobSpec> raw = LoadJobSpecFile(mlp_path);
  ASSERT_TRUE(raw.ok()) << raw.status();
  absl::StatusOr<JobSpec> spec = PrepareJobSpec(*raw);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->mode(), JOB_MODE_TRAIN_AND_EVAL);
  EXPECT_EQ(spec->model().mlp().input_dim(), 784);
  ASSERT_EQ(spec->model().mlp().hidden_units_size(), 2);
  EXPECT_EQ(spec->model().mlp().hidden_units(0), 256);
  EXPECT_EQ(spec->model().mlp().hidden_units(1), 128);
  EXPECT_EQ(spec->model().mlp().num_classes(), 10);
  EXPECT_EQ(spec->training().update_mode(), UPDATE_MODE_ASYNC);
  EXPECT_TRUE(spec->optimizer().has_adam());
  EXPECT_FLOAT_EQ(spec->optimizer().learning_rate(), 0.001f);
  EXPECT_EQ(spec->train_data().batch_size(), 128);
  EXPECT_EQ(spec->stop().max_steps(), 4000);
  EXPECT_EQ(spec->checkpoint().every_steps(), 1000);
  EXPECT_EQ(spec->checkpoint().model_dir(), "fashion_mnist_mlp");
}

}  // namespace
}  // namespace pstrain
