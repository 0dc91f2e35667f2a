// TFRecord files read a block at a time through their indexes give the same
// examples as the files loaded whole; the indexes are kept beside the files
// and rebuilt when stale; an epoch decodes each block once. (Lines of text
// stream through the same source: streamed_lines_test.)

#include "common/data/streamed_source.h"

#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/data/batch_reader.h"
#include "common/data/record_index.h"
#include "common/data/synthetic_clicks.h"
#include "common/data/tfrecord_format.h"
#include "common/data/tfrecord_reader.h"
#include "common/data/tfrecord_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

class StreamedSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/streamed";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // Two files of click logs, 1000 and 537 records: the last block of
    // each is short.
    WriteClicks("clicks-0.tfrecord", 1000, 1);
    WriteClicks("clicks-1.tfrecord", 537, 2);
    spec_.add_paths(dir_ + "/clicks-*.tfrecord");
    for (int f = 0; f < 4; ++f) spec_.add_sparse_features("field_" + std::to_string(f));
    spec_.set_label("label");
    options_.block_records = 100;
    options_.window_blocks = 3;
  }

  void WriteClicks(const std::string& name, int64_t n, uint64_t seed) {
    SyntheticClicksSource clicks;
    clicks.set_num_examples(n);
    clicks.set_num_fields(4);
    clicks.set_vocabulary_per_field(50);
    clicks.set_zipf_exponent(1.1);
    clicks.set_seed(seed);
    auto source = SyntheticClicks::Create(clicks, /*test_split=*/false);
    ASSERT_TRUE(source.ok()) << source.status();
    ASSERT_TRUE(WriteTfRecordFile(env_, dir_ + "/" + name, **source).ok());
  }

  std::unique_ptr<StreamedSource> Open() {
    auto source = StreamedSource::Open(env_, TfRecordFormat(spec_), options_);
    EXPECT_TRUE(source.ok()) << source.status();
    return source.ok() ? std::move(source).value() : nullptr;
  }

  PosixEnv env_;
  std::string dir_;
  TfRecordSource spec_;
  StreamingOptions options_;
};

void ExpectSameExamples(const ExampleBatch& a, const ExampleBatch& b) {
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.sparse_ids, b.sparse_ids);
  EXPECT_EQ(a.row_splits, b.row_splits);
}

TEST_F(StreamedSourceTest, GivesTheExamplesOfTheFilesLoadedWhole) {
  auto whole = LoadTfRecord(env_, spec_);
  ASSERT_TRUE(whole.ok()) << whole.status();
  std::unique_ptr<StreamedSource> streamed = Open();
  ASSERT_NE(streamed, nullptr);
  EXPECT_EQ(streamed->info().DebugString(), (*whole)->info().DebugString());
  EXPECT_EQ(streamed->num_examples(), 1537);
  // Blocks of 100 per file: 10 in the first, 6 (the last of 37) in the second.
  const BlockLayout* layout = streamed->block_layout();
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(layout->num_blocks(), 16);
  EXPECT_EQ(layout->block_ends[9], 1000);
  EXPECT_EQ(layout->block_ends[15], 1537);

  // Records from every block, in a random order, in one batch.
  std::vector<int64_t> indices(1537);
  std::iota(indices.begin(), indices.end(), 0);
  std::shuffle(indices.begin(), indices.end(), std::mt19937(3));
  indices.resize(300);
  ExampleBatch from_stream, from_memory;
  ASSERT_TRUE(streamed->Fill(indices, &from_stream).ok());
  ASSERT_TRUE((*whole)->Fill(indices, &from_memory).ok());
  ExpectSameExamples(from_stream, from_memory);

  const std::vector<int64_t> outside = {1537};
  EXPECT_TRUE(absl::IsOutOfRange(streamed->Fill(outside, &from_stream)));
}

TEST_F(StreamedSourceTest, AShuffledEpochReadsEachBlockOnceAndEveryRecord) {
  std::unique_ptr<StreamedSource> streamed = Open();
  ASSERT_NE(streamed, nullptr);
  BatchReaderOptions reading;
  reading.batch_size = 64;
  reading.shuffle = true;
  reading.seed = 5;
  reading.epochs = 2;
  auto reader = BatchReader::Create(streamed.get(), reading);
  ASSERT_TRUE(reader.ok()) << reader.status();
  int64_t examples = 0;
  while (true) {
    absl::StatusOr<ExampleBatch> batch = (*reader)->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    ASSERT_TRUE(batch.ok()) << batch.status();
    examples += batch->size;
  }
  EXPECT_EQ(examples, 2 * 1537);
  // The cache holds two windows (of 3 blocks) and one more: each block is
  // read once an epoch, or not at all in the second when still cached from
  // the end of the first.
  EXPECT_LE(streamed->blocks_read(), 2 * 16);
  EXPECT_GE(streamed->blocks_read(), 2 * 16 - (2 * 3 + 1));

  reading.range = {0, 100};
  EXPECT_THAT(BatchReader::Create(streamed.get(), reading).status().message(),
              HasSubstr("read whole"));
}

TEST_F(StreamedSourceTest, ReadersOnSeveralThreadsGetTheExamplesOfTheFilesLoadedWhole) {
  // As a worker's two lease readers do, and more: blocks are read outside
  // the parsing lock, one read serving every thread that waits for it.
  auto whole = LoadTfRecord(env_, spec_);
  ASSERT_TRUE(whole.ok()) << whole.status();
  options_.cached_blocks = 4;  // fewer than the threads want: blocks are evicted and read again
  std::unique_ptr<StreamedSource> streamed = Open();
  ASSERT_NE(streamed, nullptr);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(t);
      std::uniform_int_distribution<int64_t> record(0, 1536);
      for (int round = 0; round < 50; ++round) {
        std::vector<int64_t> indices(32);
        for (int64_t& index : indices) index = record(random);
        ExampleBatch from_stream, from_memory;
        const bool same = streamed->Fill(indices, &from_stream).ok() &&
                          (*whole)->Fill(indices, &from_memory).ok() &&
                          from_stream.labels == from_memory.labels &&
                          from_stream.sparse_ids == from_memory.sparse_ids &&
                          from_stream.row_splits == from_memory.row_splits;
        if (!same) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(mismatches, ::testing::Each(0));
  EXPECT_GT(streamed->blocks_read(), 16);  // evictions happened, so reads raced
}

TEST_F(StreamedSourceTest, KeepsEachIndexBesideItsFileAndRebuildsItWhenStale) {
  ASSERT_NE(Open(), nullptr);
  const std::string index_path = RecordIndexPath(dir_ + "/clicks-0.tfrecord");
  ASSERT_TRUE(std::filesystem::exists(index_path));
  RecordFileIndex index;
  {
    std::ifstream in(index_path, std::ios::binary);
    ASSERT_TRUE(index.ParseFromIstream(&in));
  }
  EXPECT_EQ(index.num_records(), 1000);
  EXPECT_EQ(index.block_offsets_size(), 10);
  EXPECT_EQ(index.block_offsets(0), 0);

  // An index that is current is used as it is: one edited to claim four
  // classes shows up in the source's info.
  index.set_num_classes(4);
  {
    std::ofstream out(index_path, std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(index.SerializeToOstream(&out));
  }
  EXPECT_EQ(Open()->info().num_classes, 4);
  // One that cannot be right (a negative width) is built again.
  index.add_dense_widths(-5);
  {
    std::ofstream out(index_path, std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(index.SerializeToOstream(&out));
  }
  EXPECT_EQ(Open()->info().num_classes, 2);

  // Another block size, or a data file rewritten, rebuilds it.
  options_.block_records = 250;
  EXPECT_EQ(Open()->info().num_classes, 2);
  WriteClicks("clicks-0.tfrecord", 400, 3);
  std::unique_ptr<StreamedSource> rewritten = Open();
  ASSERT_NE(rewritten, nullptr);
  EXPECT_EQ(rewritten->num_examples(), 937);
}

TEST_F(StreamedSourceTest, AFileChangedInPlaceAtTheSameSizeAndTimeIsIndexedAgain) {
  ASSERT_NE(Open(), nullptr);
  // One byte of a record's data flipped, the size kept and the modification
  // time put back: only the index's sample checksum can tell.
  const std::string file = dir_ + "/clicks-1.tfrecord";
  const auto modified = std::filesystem::last_write_time(file);
  {
    std::fstream data(file, std::ios::in | std::ios::out | std::ios::binary);
    data.seekp(20);
    data.put('\x5a');
  }
  std::filesystem::last_write_time(file, modified);
  // Indexing it again reads every record, and the flipped byte fails its CRC.
  auto reopened = StreamedSource::Open(env_, TfRecordFormat(spec_), options_);
  EXPECT_TRUE(absl::IsDataLoss(reopened.status())) << reopened.status();
}

TEST_F(StreamedSourceTest, AFileChangedUnderARunningReaderIsDataLossNamingTheIndex) {
  std::unique_ptr<StreamedSource> streamed = Open();
  ASSERT_NE(streamed, nullptr);
  std::filesystem::resize_file(dir_ + "/clicks-1.tfrecord", 100);
  const std::vector<int64_t> in_the_second_file = {1200};
  ExampleBatch batch;
  const absl::Status status = streamed->Fill(in_the_second_file, &batch);
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("clicks-1.tfrecord.pstrain-index"));
}

TEST_F(StreamedSourceTest, GzippedFilesStreamAsTheyReadWhole) {
  TfRecordWriteOptions gzip;
  gzip.gzip = true;
  SyntheticClicksSource clicks;
  clicks.set_num_examples(30000);
  clicks.set_num_fields(4);
  clicks.set_vocabulary_per_field(50);
  clicks.set_zipf_exponent(1.1);
  auto source = SyntheticClicks::Create(clicks, false);
  ASSERT_TRUE(source.ok());
  ASSERT_TRUE(WriteTfRecordFile(env_, dir_ + "/clicks-2.tfrecord", **source, gzip).ok());
  options_.block_records = 2000;  // each read inflates up to a MiB it skips
  auto whole = LoadTfRecord(env_, spec_);
  ASSERT_TRUE(whole.ok()) << whole.status();
  std::unique_ptr<StreamedSource> streamed = Open();
  ASSERT_NE(streamed, nullptr);
  ASSERT_EQ(streamed->num_examples(), (*whole)->num_examples());
  std::vector<int64_t> all(static_cast<size_t>((*whole)->num_examples()));
  std::iota(all.rbegin(), all.rend(), 0);  // backwards: every read seeks
  ExampleBatch expected, read;
  ASSERT_TRUE((*whole)->Fill(all, &expected).ok());
  ASSERT_TRUE(streamed->Fill(all, &read).ok());
  ExpectSameExamples(read, expected);
}

}  // namespace
}  // namespace pstrain
