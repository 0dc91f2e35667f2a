// Data written as libsvm text reads back through the libsvm reader as the
// same examples: click logs (sparse ids), dense features with their zeros
// left out, repeated ids merged, plain and gzipped; a file that cannot be
// written is an error naming it.

#include "common/data/libsvm_writer.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/in_memory_source.h"
#include "common/data/libsvm_reader.h"
#include "common/data/synthetic_clicks.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

class LibsvmWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/libsvm_writer";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  static std::unique_ptr<InMemorySource> Load(const std::string& path, int64_t num_features) {
    LibsvmSource spec;
    spec.set_path(path);
    spec.set_num_features(num_features);
    auto source = LoadLibsvm(spec);
    EXPECT_TRUE(source.ok()) << source.status();
    return source.ok() ? *std::move(source) : nullptr;
  }

  static ExampleBatch All(const ExampleSource& source) {
    std::vector<int64_t> all(source.num_examples());
    std::iota(all.begin(), all.end(), 0);
    ExampleBatch batch;
    EXPECT_TRUE(source.Fill(all, &batch).ok());
    return batch;
  }

  PosixEnv env_;
  std::string dir_;
};

TEST_F(LibsvmWriterTest, ClickLogsReadBackAsTheSameIdsAndLabelsPlainAndGzipped) {
  SyntheticClicksSource spec;
  spec.set_num_examples(3000);  // more than one fill of examples
  spec.set_num_fields(4);
  spec.set_vocabulary_per_field(100);
  spec.set_seed(5);
  FillSyntheticClicksDefaults(&spec);
  auto clicks = SyntheticClicks::Create(spec);
  ASSERT_TRUE(clicks.ok()) << clicks.status();
  EXPECT_EQ(LibsvmFeatureCount((*clicks)->info()), 400);
  const ExampleBatch expected = All(**clicks);

  for (const bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    const std::string path = dir_ + (gzip ? "/clicks.libsvm.gz" : "/clicks.libsvm");
    LibsvmWriteOptions options;
    options.gzip = gzip;
    ASSERT_TRUE(WriteLibsvmFile(env_, path, **clicks, options).ok());
    std::unique_ptr<InMemorySource> read = Load(path, LibsvmFeatureCount((*clicks)->info()));
    ASSERT_NE(read, nullptr);
    EXPECT_EQ(read->info().num_examples, 3000);
    EXPECT_EQ(read->info().sparse_dim, 400);
    EXPECT_EQ(read->info().num_classes, 2);
    const ExampleBatch batch = All(*read);
    EXPECT_EQ(batch.labels, expected.labels);
    EXPECT_EQ(batch.row_splits, expected.row_splits);
    EXPECT_EQ(batch.sparse_ids, expected.sparse_ids);
    for (float value : batch.sparse_values) ASSERT_EQ(value, 1.0f);
  }
  EXPECT_LT(std::filesystem::file_size(dir_ + "/clicks.libsvm.gz"),
            std::filesystem::file_size(dir_ + "/clicks.libsvm") / 2);
}

TEST_F(LibsvmWriterTest, DenseFeaturesComeFirstWithoutTheirZerosAndRepeatedIdsAreMerged) {
  InMemorySource::Examples examples;
  examples.num_examples = 2;
  examples.dense_dim = 3;
  examples.dense_floats = {0.5f, 0.0f, -2.0f, 0.0f, 0.0f, 0.0f};
  examples.sparse_ids = {4, 1, 4, 0};  // unsorted, and id 4 twice in the first
  examples.sparse_values = {1.0f, 0.1f, 2.5f, 3.0f};
  examples.row_splits = {0, 3, 4};
  examples.sparse_dim = 5;
  examples.labels = {2.0f, 0.25f};
  auto source = InMemorySource::Create(std::move(examples));
  ASSERT_TRUE(source.ok()) << source.status();

  const std::string path = dir_ + "/mixed.libsvm";
  ASSERT_TRUE(WriteLibsvmFile(env_, path, **source).ok());
  // Shortest forms: 0.1f is written "0.1", not "0.100000001".
  EXPECT_EQ(Read(path), "2 1:0.5 3:-2 5:0.1 8:3.5\n0.25 4:3\n");
  std::unique_ptr<InMemorySource> read = Load(path, LibsvmFeatureCount((*source)->info()));
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->info().sparse_dim, 8);
  const ExampleBatch batch = All(*read);
  EXPECT_EQ(batch.labels, (std::vector<float>{2.0f, 0.25f}));
  EXPECT_EQ(batch.sparse_ids, (std::vector<int64_t>{0, 2, 4, 7, 3}));
  EXPECT_EQ(batch.sparse_values, (std::vector<float>{0.5f, -2.0f, 0.1f, 3.5f, 3.0f}));
}

TEST_F(LibsvmWriterTest, AFileThatCannotBeWrittenIsAnErrorNamingIt) {
  SyntheticClicksSource spec;
  spec.set_num_examples(10);
  FillSyntheticClicksDefaults(&spec);
  auto clicks = SyntheticClicks::Create(spec);
  ASSERT_TRUE(clicks.ok());
  const std::string path = dir_ + "/no_such_folder/train.libsvm";
  const absl::Status status = WriteLibsvmFile(env_, path, **clicks);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(path), std::string::npos) << status;
}

}  // namespace
}  // namespace pstrain
