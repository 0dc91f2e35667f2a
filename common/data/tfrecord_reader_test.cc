// Data written as TFRecord of tf.Example (as TensorFlow writes it) reads
// back as the same examples, plain or gzipped, from one file or several;
// damaged files are refused, naming the file and the record.

#include "common/data/tfrecord_reader.h"

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/data_source.h"
#include "common/data/synthetic_clicks.h"
#include "common/data/test_files.h"
#include "common/data/tf_example_decoder.h"
#include "common/data/tfrecord_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

ExampleBatch All(const ExampleSource& source) {
  std::vector<int64_t> indices(source.num_examples());
  std::iota(indices.begin(), indices.end(), 0);
  ExampleBatch batch;
  EXPECT_TRUE(source.Fill(indices, &batch).ok());
  return batch;
}

class TfRecordReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/tfrecord";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  // The toy image data set, and a source spec for it as written by
  // WriteTfRecordFile.
  std::unique_ptr<ExampleSource> Images() {
    DataSpec spec;
    spec.mutable_fashion_mnist()->set_dir(testing_util::WriteToyImageDataset(120, 30));
    auto source = OpenExampleSource(spec, PassMode::kTrain);
    EXPECT_TRUE(source.ok()) << source.status();
    return std::move(source).value();
  }

  TfRecordSource ImageSpec(const std::string& pattern) {
    TfRecordSource spec;
    spec.add_paths(JoinPath(pattern));
    spec.add_dense_features("dense");
    spec.set_label("label");
    return spec;
  }

  std::string JoinPath(const std::string& name) { return dir_ + "/" + name; }

  PosixEnv env_;
  std::string dir_;
};

TEST_F(TfRecordReaderTest, ReadsBackTheExamplesPlainAndGzippedAcrossFiles) {
  std::unique_ptr<ExampleSource> images = Images();
  ASSERT_TRUE(WriteTfRecordFile(env_, JoinPath("images-0.tfrecord"), *images).ok());
  TfRecordWriteOptions gzip;
  gzip.gzip = true;
  ASSERT_TRUE(WriteTfRecordFile(env_, JoinPath("images-1.tfrecord"), *images, gzip).ok());
  EXPECT_LT(std::filesystem::file_size(JoinPath("images-1.tfrecord")),
            std::filesystem::file_size(JoinPath("images-0.tfrecord")));

  // Through the job spec, as a job reads it: both files, the plain one first.
  DataSpec spec;
  *spec.mutable_tfrecord() = ImageSpec("images-*.tfrecord");
  auto read = OpenExampleSource(spec, PassMode::kTrain);
  ASSERT_TRUE(read.ok()) << read.status();
  const int64_t n = images->num_examples();
  ASSERT_EQ((*read)->num_examples(), 2 * n);
  EXPECT_EQ((*read)->info().dense_dim, images->info().dense_dim);
  EXPECT_EQ((*read)->info().num_classes, images->info().num_classes);
  const ExampleBatch want = All(*images);
  const ExampleBatch got = All(**read);
  const int64_t dim = want.dense_dim();
  for (int64_t copy = 0; copy < 2; ++copy) {
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got.labels[copy * n + i], want.labels[i]);
      for (int64_t d = 0; d < dim; ++d) {
        ASSERT_EQ(got.dense.data<float>()[(copy * n + i) * dim + d],
                  want.dense.data<float>()[i * dim + d])
            << "example " << i << " of file " << copy;
      }
    }
  }
}

TEST_F(TfRecordReaderTest, ClickLogsGiveOneIdPerField) {
  SyntheticClicksSource clicks_spec;
  clicks_spec.set_num_examples(200);
  clicks_spec.set_num_fields(3);
  clicks_spec.set_vocabulary_per_field(50);
  FillSyntheticClicksDefaults(&clicks_spec);
  auto clicks = SyntheticClicks::Create(clicks_spec);
  ASSERT_TRUE(clicks.ok());
  ASSERT_TRUE(WriteTfRecordFile(env_, JoinPath("clicks.tfrecord"), **clicks).ok());

  TfRecordSource spec;
  spec.add_paths(JoinPath("clicks.tfrecord"));
  for (const char* field : {"field_0", "field_1", "field_2"}) spec.add_sparse_features(field);
  spec.set_hash_buckets(1 << 16);
  spec.set_label("label");
  auto read = LoadTfRecord(env_, spec);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)->info().num_fields, 3);
  EXPECT_EQ((*read)->info().sparse_dim, 1 << 16);
  EXPECT_EQ((*read)->info().dense_dim, 0);
  const ExampleBatch want = All(**clicks);
  const ExampleBatch got = All(**read);
  EXPECT_EQ(got.labels, want.labels);
  ASSERT_EQ(got.sparse_ids.size(), want.sparse_ids.size());
  for (size_t k = 0; k < want.sparse_ids.size(); ++k) {
    ASSERT_EQ(got.sparse_ids[k],
              CategoricalId(absl::StrCat("field_", k % 3), want.sparse_ids[k], 1 << 16));
  }
}

TEST_F(TfRecordReaderTest, RefusesDamagedFilesNamingTheRecord) {
  std::unique_ptr<ExampleSource> images = Images();
  const std::string path = JoinPath("images.tfrecord");
  ASSERT_TRUE(WriteTfRecordFile(env_, path, *images).ok());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t record_bytes = bytes.size() / images->num_examples();  // all the same size
  auto write = [&](const std::string& contents) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
  };

  std::string damaged = bytes;
  damaged[3 * record_bytes + 40] ^= 1;  // inside record 3's data
  write(damaged);
  auto read = LoadTfRecord(env_, ImageSpec("images.tfrecord"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr(absl::StrCat(path, ": record at offset ", 3 * record_bytes,
                                     ": the crc32c of its")));

  write(bytes.substr(0, bytes.size() - 5));
  read = LoadTfRecord(env_, ImageSpec("images.tfrecord"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("is truncated"));

  write(bytes);
  TfRecordSource spec = ImageSpec("images.tfrecord");
  spec.set_label("class");
  read = LoadTfRecord(env_, spec);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << read.status();
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr(absl::StrCat(path,
                                     ": record 0 at offset 0: feature 'class' (the label) "
                                     "is missing")));

  write("");
  read = LoadTfRecord(env_, ImageSpec("images.tfrecord"));
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("no records in 1 file(s)"));

  read = LoadTfRecord(env_, ImageSpec("missing-*.tfrecord"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound) << read.status();
}

}  // namespace
}  // namespace pstrain
