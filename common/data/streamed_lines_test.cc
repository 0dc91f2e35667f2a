// Criteo, CSV and libsvm files streamed a block of lines at a time through
// their line-offset indexes give what the same files read whole give:
// blank lines, headers, comments and "\r\n" skipped alike, -1/+1 labels
// read as 0/1, several files as one source, gzipped ones read from their
// access points; bad lines are refused at the index build with the file
// and line.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/criteo_reader.h"
#include "common/data/csv_reader.h"
#include "common/data/data_source.h"
#include "common/data/file_patterns.h"
#include "common/data/gzip_access.h"
#include "common/data/record_index.h"
#include "common/data/test_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protos/data_index.pb.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using testing_util::WriteTestFile;

// Streamed in blocks of 7 lines (unless said), windows of 3 blocks: every
// file here ends in a short block, and a batch spans blocks.
DataSpec Streamed(DataSpec spec, int64_t block_records = 7) {
  spec.set_read_mode(DataSpec::READ_MODE_STREAMED);
  spec.set_stream_block_records(block_records);
  spec.set_shuffle_window_blocks(3);
  return spec;
}

DataSpec InMemory(DataSpec spec) {
  spec.set_read_mode(DataSpec::READ_MODE_IN_MEMORY);
  return spec;
}

// Every example of `spec` streamed equals the same example read whole,
// asked for in a shuffled order; and both describe the data alike.
void ExpectStreamedAsLoadedWhole(const DataSpec& spec, int64_t block_records = 7) {
  absl::StatusOr<std::unique_ptr<ExampleSource>> whole =
      OpenExampleSource(InMemory(spec), PassMode::kTrain);
  ASSERT_TRUE(whole.ok()) << whole.status();
  absl::StatusOr<std::unique_ptr<ExampleSource>> streamed =
      OpenExampleSource(Streamed(spec, block_records), PassMode::kTrain);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  ASSERT_NE((*streamed)->block_layout(), nullptr) << "not streamed";
  EXPECT_EQ((*streamed)->info().DebugString(), (*whole)->info().DebugString());

  std::vector<int64_t> order(static_cast<size_t>((*whole)->num_examples()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  ExampleBatch expected, read;
  ASSERT_TRUE((*whole)->Fill(order, &expected).ok());
  ASSERT_TRUE((*streamed)->Fill(order, &read).ok());
  EXPECT_EQ(read.size, expected.size);
  EXPECT_EQ(read.labels, expected.labels);
  EXPECT_EQ(read.sparse_ids, expected.sparse_ids);
  EXPECT_EQ(read.sparse_values, expected.sparse_values);
  EXPECT_EQ(read.row_splits, expected.row_splits);
  ASSERT_EQ(read.dense.num_elements(), expected.dense.num_elements());
  for (int64_t i = 0; i < read.dense.num_elements(); ++i) {
    ASSERT_EQ(read.dense.data<float>()[i], expected.dense.data<float>()[i]) << i;
  }
}

// A Criteo line with label `i % 2` and values that vary with i, some missing.
std::string CriteoLine(int i) {
  std::vector<std::string> columns = {std::to_string(i % 2)};
  for (int c = 0; c < kCriteoIntegerFeatures; ++c) {
    columns.push_back((i + c) % 5 == 0 ? "" : std::to_string((i * 7 + c) % 100 - 3));
  }
  for (int c = 0; c < kCriteoCategoricalFeatures; ++c) {
    columns.push_back((i + c) % 9 == 0 ? "" : absl::StrCat(absl::Hex((i * 31 + c * 17) % 997)));
  }
  return absl::StrJoin(columns, "\t");
}

TEST(StreamedLinesTest, CriteoFilesStreamAsTheyReadWhole) {
  std::string first, second;
  for (int i = 0; i < 40; ++i) {
    absl::StrAppend(&first, CriteoLine(i), i % 11 == 0 ? "\r\n" : "\n", i % 13 == 0 ? "\n" : "");
  }
  for (int i = 40; i < 63; ++i) absl::StrAppend(&second, CriteoLine(i), i < 62 ? "\n" : "");
  const std::string dir = std::filesystem::path(WriteTestFile("criteo/day_0", first)).parent_path();
  WriteTestFile("criteo/day_1", second);  // its last line has no line break
  DataSpec spec;
  spec.mutable_criteo()->add_paths(dir + "/day_*");
  spec.mutable_criteo()->set_hash_buckets(4096);
  ExpectStreamedAsLoadedWhole(spec);
  // The indexes were kept beside the files, and nothing else was written.
  EXPECT_TRUE(std::filesystem::exists(RecordIndexPath(dir + "/day_0")));
  EXPECT_TRUE(std::filesystem::exists(RecordIndexPath(dir + "/day_1")));
}

TEST(StreamedLinesTest, CsvStreamsAsItReadsWholeSkippingItsHeaderAndBlankLines) {
  std::string text = "height;weight;label\n\n";
  for (int i = 0; i < 30; ++i) {
    absl::StrAppend(&text, i * 0.5, ";", -i, ";", i % 3, i % 4 == 0 ? "\r\n" : "\n");
    if (i % 10 == 0) text += "\n";
  }
  DataSpec spec;
  spec.mutable_csv()->set_path(WriteTestFile("lines.csv", text));
  spec.mutable_csv()->set_has_header(true);
  spec.mutable_csv()->set_delimiter(";");
  spec.mutable_csv()->set_label_column(2);
  ExpectStreamedAsLoadedWhole(spec);
}

TEST(StreamedLinesTest, CsvByNamesStreamsAsItReadsWholeWithCategoriesAndFills) {
  std::string text = "id,city,size,label\n";
  const char* cities[] = {"oslo", "lima", ""};
  for (int i = 0; i < 40; ++i) {
    absl::StrAppend(&text, "r", i, ",", cities[i % 3], ",", i % 5 == 0 ? "NA" : absl::StrCat(i),
                    ",", i % 2, "\n");
  }
  DataSpec spec;
  CsvSource* csv = spec.mutable_csv();
  csv->set_path(WriteTestFile("named.csv", text));
  csv->set_label("label");
  csv->add_categorical("city");
  csv->add_ignore("id");
  CsvFill* fill = csv->add_fill_missing();
  fill->set_column("size");
  fill->set_value(-1);
  ExpectStreamedAsLoadedWhole(spec);
  auto streamed = OpenExampleSource(Streamed(spec, 7), PassMode::kTrain);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ((*streamed)->info().dense_names, (std::vector<std::string>{"size"}));
  EXPECT_EQ((*streamed)->info().dense_fill, (std::vector<float>{-1}));
  EXPECT_EQ((*streamed)->info().num_fields, 1);
}

TEST(StreamedLinesTest, CsvFilesByGlobAndListAreOneSourceEachWithItsHeader) {
  for (int f = 0; f < 3; ++f) {
    std::string text = "a,b,label\n";
    for (int i = 0; i < 10 + f; ++i) absl::StrAppend(&text, f, ",", i, ",", (i + f) % 2, "\n");
    WriteTestFile(absl::StrCat("parts/part-", f, ".csv"), text);
  }
  DataSpec spec;
  const std::string dir = std::string(getenv("TEST_TMPDIR")) + "/parts";
  spec.mutable_csv()->set_path(dir + "/part-[01].csv");
  spec.mutable_csv()->add_paths(dir + "/part-2.csv");
  spec.mutable_csv()->set_has_header(true);
  spec.mutable_csv()->set_label_column(2);
  ExpectStreamedAsLoadedWhole(spec);
  absl::StatusOr<std::unique_ptr<ExampleSource>> whole =
      OpenExampleSource(InMemory(spec), PassMode::kTrain);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ((*whole)->num_examples(), 10 + 11 + 12);
  // In order: part-0's ten lines, then part-1's, then part-2's.
  ExampleBatch batch;
  ASSERT_TRUE((*whole)->Fill(std::vector<int64_t>{0, 10, 21}, &batch).ok());
  EXPECT_EQ(batch.dense.data<float>()[0], 0);
  EXPECT_EQ(batch.dense.data<float>()[2], 1);
  EXPECT_EQ(batch.dense.data<float>()[4], 2);
}

TEST(StreamedLinesTest, LibsvmStreamsAsItReadsWholeWithPlusMinusOneLabelsAsZeroOne) {
  std::string text = "# a9a-like, 1-based\n";
  for (int i = 0; i < 33; ++i) {
    absl::StrAppend(&text, i % 3 == 0 ? "+1" : "-1", " ", 1 + i % 4, ":", i * 0.25, " ", 10 + i % 7,
                    ":1", i % 5 == 0 ? "  # noted\n" : "\n");
    if (i % 8 == 0) text += "   # a comment line\n\n";
  }
  DataSpec spec;
  spec.mutable_libsvm()->set_path(WriteTestFile("lines.libsvm", text));
  ExpectStreamedAsLoadedWhole(spec);
  absl::StatusOr<std::unique_ptr<ExampleSource>> streamed =
      OpenExampleSource(Streamed(spec), PassMode::kTrain);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ((*streamed)->info().num_classes, 2);
  EXPECT_EQ((*streamed)->info().sparse_dim, 16);  // the largest index, 16, 1-based
}

TEST(StreamedLinesTest, LibsvmFilesAreOneSourceWhoseWidthIsTheWidestFiles) {
  DataSpec spec;
  spec.mutable_libsvm()->set_path(WriteTestFile("svm/a.svm", "+1 1:0.5 3:1\n-1 2:2\n"));
  spec.mutable_libsvm()->add_paths(WriteTestFile("svm/b.svm", "-1 7:1\n+1 1:1 4:3\n+1 2:1\n"));
  ExpectStreamedAsLoadedWhole(spec, /*block_records=*/2);
  absl::StatusOr<std::unique_ptr<ExampleSource>> whole =
      OpenExampleSource(InMemory(spec), PassMode::kTrain);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ((*whole)->num_examples(), 5);
  EXPECT_EQ((*whole)->info().sparse_dim, 7);  // index 7, in the second file
  EXPECT_EQ((*whole)->info().num_classes, 2);
}

TEST(StreamedLinesTest, ABadLineIsRefusedAtTheIndexBuildWithItsFileAndLine) {
  std::string text;
  for (int i = 0; i < 20; ++i) absl::StrAppend(&text, CriteoLine(i), "\n", i == 3 ? "\n" : "");
  text += "1\tnot-a-number" + std::string(38, '\t') + "\n";  // line 22
  DataSpec spec;
  spec.mutable_criteo()->add_paths(WriteTestFile("bad/day_0", text));
  absl::StatusOr<std::unique_ptr<ExampleSource>> refused =
      OpenExampleSource(Streamed(spec), PassMode::kTrain);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(),
              HasSubstr("bad/day_0:22: integer feature I1 (column 2): \"not-a-number\""));
}

TEST(StreamedLinesTest, GzippedFilesStreamFromTheirAccessPoints) {
  // Two gzip members, as `cat a.gz b.gz` makes, of 1.4 MB of lines in all,
  // in blocks of 500 lines (58 KB); an access point at the deflate boundary
  // before a block's start (these lines make deflate blocks of about 300 KB).
  std::string first, second;
  for (int i = 0; i < 5000; ++i) absl::StrAppend(&first, CriteoLine(i), "\n");
  for (int i = 5000; i < 12000; ++i) absl::StrAppend(&second, CriteoLine(i), "\n");
  std::ifstream first_gz(WriteTestFile("gz/first.gz", first, /*gzip=*/true), std::ios::binary);
  std::ifstream second_gz(WriteTestFile("gz/second.gz", second, /*gzip=*/true), std::ios::binary);
  std::stringstream members;
  members << first_gz.rdbuf() << second_gz.rdbuf();
  DataSpec spec;
  const std::string path = WriteTestFile("gz/day_0.gz", members.str());
  spec.mutable_criteo()->add_paths(path);
  ExpectStreamedAsLoadedWhole(spec, /*block_records=*/500);

  // Its index keeps the access points, their windows beside it.
  RecordFileIndex index;
  std::ifstream saved(RecordIndexPath(path), std::ios::binary);
  ASSERT_TRUE(index.ParseFromIstream(&saved));
  EXPECT_EQ(index.stream_bytes(), static_cast<int64_t>(first.size() + second.size()));
  EXPECT_GE(index.gzip_access_points_size(), 4);
  EXPECT_TRUE(std::filesystem::exists(GzipWindowsPath(path)));
  // Without the windows the index is stale, and built again.
  std::filesystem::remove(GzipWindowsPath(path));
  ExpectStreamedAsLoadedWhole(spec, /*block_records=*/500);
  EXPECT_TRUE(std::filesystem::exists(GzipWindowsPath(path)));
}

TEST(StreamedLinesTest, AGzippedFileWhoseFirstBlockStartsPastDeflateBlocksKeepsItsIndex) {
  // A header of 600 KB that compresses little: deflate blocks end inside
  // it, so the first block's access point is past the stream's start.
  std::mt19937 random(5);
  std::string text;
  while (text.size() < (600 << 10)) absl::StrAppend(&text, "c", random() % 1000000, ";");
  text += "\n";
  for (int i = 0; i < 50; ++i) absl::StrAppend(&text, i, ";", i % 2, "\n");
  DataSpec spec;
  spec.mutable_csv()->set_path(WriteTestFile("gz/long_header.csv.gz", text, /*gzip=*/true));
  spec.mutable_csv()->set_has_header(true);
  spec.mutable_csv()->set_delimiter(";");
  spec.mutable_csv()->set_label_column(1);
  ExpectStreamedAsLoadedWhole(spec);

  PosixEnv env;
  RecordIndexOptions options;
  options.block_records = 7;
  RecordIndexOutcome outcome;
  absl::StatusOr<RecordFileIndex> index = LoadOrBuildRecordIndex(
      env, spec.csv().path(), *CsvRecordFormat(spec.csv()), options, &outcome);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_GT(index->gzip_access_points(0).stream_offset(), 0);
  EXPECT_LE(index->gzip_access_points(0).stream_offset(), index->block_offsets(0));
  // The index the streamed reading saved is current: loaded, not built.
  EXPECT_FALSE(outcome.built) << outcome.why_built;
}

TEST(StreamedLinesTest, AGzippedFileIsReadInMemoryByDefaultUnderAGigabyte) {
  std::string text;
  for (int i = 0; i < 10; ++i) absl::StrAppend(&text, CriteoLine(i), "\n");
  DataSpec spec;
  spec.mutable_criteo()->add_paths(WriteTestFile("gz/small.gz", text, /*gzip=*/true));
  absl::StatusOr<std::unique_ptr<ExampleSource>> automatic =
      OpenExampleSource(spec, PassMode::kTrain);
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  EXPECT_EQ((*automatic)->block_layout(), nullptr);
  EXPECT_EQ((*automatic)->num_examples(), 10);
}

TEST(StreamedLinesTest, AFileWithoutLineBreaksIsRefusedNotReadWhole) {
  DataSpec spec;
  spec.mutable_csv()->set_path(WriteTestFile("one_line.csv", std::string(17 << 20, '7')));
  absl::StatusOr<std::unique_ptr<ExampleSource>> refused =
      OpenExampleSource(Streamed(spec), PassMode::kTrain);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("one_line.csv:1: a line of more than"));
}

TEST(StreamedLinesTest, AFileChangedUnderARunningReaderIsDataLossNamingTheIndex) {
  std::string text;
  for (int i = 0; i < 30; ++i) absl::StrAppend(&text, CriteoLine(i), "\n");
  DataSpec spec;
  const std::string path = WriteTestFile("changed/day_0", text);
  spec.mutable_criteo()->add_paths(path);
  absl::StatusOr<std::unique_ptr<ExampleSource>> streamed =
      OpenExampleSource(Streamed(spec), PassMode::kTrain);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  // Cut inside the fourth block's lines.
  std::filesystem::resize_file(path, text.size() - 50);
  ExampleBatch batch;
  const absl::Status status = (*streamed)->Fill(std::vector<int64_t>{29}, &batch);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("day_0.pstrain-index says"));
}

}  // namespace
}  // namespace pstrain
