// Criteo display-advertising lines become 13 dense features (log(1 + x),
// missing and negative as 0) and one hashed id per categorical field
// (missing values to their field's own id); malformed lines are refused
// with the file, the line and the column; files are read by glob, plain or
// gzipped.

#include "common/data/criteo_reader.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data/text_lines.h"
#include "common/data/tf_example_decoder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "zlib.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kBuckets = 1 << 20;

// A line of `label`, the integers and the categories, tab-separated.
std::string Line(const std::string& label, std::vector<std::string> integers,
                 std::vector<std::string> categories) {
  integers.resize(kCriteoIntegerFeatures);
  categories.resize(kCriteoCategoricalFeatures);
  return absl::StrCat(label, "\t", absl::StrJoin(integers, "\t"), "\t",
                      absl::StrJoin(categories, "\t"));
}

absl::Status Parse(const std::string& text, InMemorySource::Examples* examples) {
  return ParseCriteo(text, "day_0", kBuckets, examples);
}

TEST(CriteoReaderTest, IntegersBecomeLogOnePlusXAndCategoriesOneIdPerField) {
  const std::string full = Line("1", {"5", "-3", "0", "120"}, {"68fd1e64", "80e26c9b", "FB936136"});
  const std::string sparse = Line("0", {}, {});
  InMemorySource::Examples examples;
  ASSERT_TRUE(Parse(absl::StrCat(full, "\n", sparse, "\n"), &examples).ok());
  ASSERT_EQ(examples.num_examples, 2);
  EXPECT_EQ(examples.dense_dim, 13);
  EXPECT_EQ(examples.num_fields, 26);
  EXPECT_EQ(examples.sparse_dim, kBuckets);
  EXPECT_EQ(examples.labels, (std::vector<float>{1, 0}));
  EXPECT_EQ(examples.row_splits, (std::vector<int64_t>{0, 26, 52}));
  EXPECT_FLOAT_EQ(examples.dense_floats[0], std::log1p(5.0));
  EXPECT_FLOAT_EQ(examples.dense_floats[1], 0);  // -3 taken as 0
  EXPECT_FLOAT_EQ(examples.dense_floats[2], 0);
  EXPECT_FLOAT_EQ(examples.dense_floats[3], std::log1p(120.0));
  EXPECT_FLOAT_EQ(examples.dense_floats[4], 0);  // missing
  for (int i = 13; i < 26; ++i) EXPECT_EQ(examples.dense_floats[i], 0) << i;
  // Hex in either case is the same value, hashed with its field's name.
  EXPECT_EQ(examples.sparse_ids[0], CategoricalId("C1", int64_t{0x68fd1e64}, kBuckets));
  EXPECT_EQ(examples.sparse_ids[2], CategoricalId("C3", int64_t{0xfb936136}, kBuckets));
  // A missing value: its field's own id, the same on every line, another
  // in each field.
  EXPECT_EQ(examples.sparse_ids[3], examples.sparse_ids[26 + 3]);
  EXPECT_NE(examples.sparse_ids[26 + 3], examples.sparse_ids[26 + 4]);
  EXPECT_NE(examples.sparse_ids[26 + 0], examples.sparse_ids[0]);
  for (int64_t id : examples.sparse_ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, kBuckets);
  }
}

TEST(CriteoReaderTest, AcceptsCrLfBlankLinesAndNoFinalNewline) {
  const std::string line = Line("1", {"1"}, {"a"});
  InMemorySource::Examples examples;
  ASSERT_TRUE(Parse(absl::StrCat(line, "\r\n\n", line, "\r\n", line), &examples).ok());
  EXPECT_EQ(examples.num_examples, 3);
  EXPECT_EQ(examples.sparse_ids[25], examples.sparse_ids[26 + 25]);
}

TEST(CriteoReaderTest, RefusesMalformedLinesNamingTheLineAndColumn) {
  const std::string good = Line("0", {}, {});
  struct Case {
    std::string line;
    std::string message;
  };
  const std::vector<Case> cases = {
      {good.substr(0, good.size() - 1), "day_0:2: 39 tab-separated columns; a Criteo line has 40"},
      {good + "\t", "day_0:2: 41 tab-separated columns"},
      {Line("2", {}, {}), "day_0:2: label \"2\" is not 0 or 1"},
      {Line("", {}, {}), "day_0:2: label \"\" is not 0 or 1"},
      {Line("1", {"1", "3.5"}, {}), "integer feature I2 (column 3): \"3.5\" is not an integer"},
      {Line("1", {"99999999999999999999"}, {}), "I1 (column 2)"},
      {Line("0", {}, {"", "zz"}), "categorical feature C2 (column 16): \"zz\" is not 1 to 16 hex"},
      {Line("0", {}, {"11112222333344445"}), "C1 (column 15)"},
      {Line("0", {}, {" a"}), "C1 (column 15)"},
  };
  for (const Case& c : cases) {
    InMemorySource::Examples examples;
    const absl::Status status = Parse(absl::StrCat(good, "\n", c.line, "\n"), &examples);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.line;
    EXPECT_THAT(status.message(), HasSubstr(c.message)) << c.line;
  }
}

// A huge field is quoted by its first bytes and its length; a line past
// the streamed reader's limit is refused in memory by the same limit.
TEST(CriteoReaderTest, QuotesHugeFieldsShortAndRefusesHugeLines) {
  InMemorySource::Examples examples;
  const absl::Status field = Parse(Line("0", {}, {std::string(1 << 20, 'g')}) + "\n", &examples);
  EXPECT_THAT(field.message(), HasSubstr("day_0:1: categorical feature C1 (column 15): \"gggg"));
  EXPECT_THAT(field.message(), HasSubstr("...\" (1048576 bytes) is not 1 to 16 hexadecimal"));
  EXPECT_LT(field.message().size(), 200u);
  const absl::Status line =
      Parse(absl::StrCat(Line("0", {}, {}), "\n", std::string(kMaxLineBytes + 1, 'x')), &examples);
  EXPECT_EQ(line.message(),
            "day_0:2: a line of more than 16777216 bytes: not a file of text lines?");
}

class CriteoFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/criteo";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  std::string dir_;
};

TEST_F(CriteoFilesTest, ReadsPlainAndGzippedFilesByGlobInNameOrder) {
  const std::string day0 = absl::StrCat(Line("1", {"1"}, {"a"}), "\n", Line("0", {"2"}, {}), "\n");
  const std::string day1 = absl::StrCat(Line("1", {"3"}, {"b"}), "\n");
  std::ofstream(dir_ + "/day_0.tsv") << day0;
  gzFile gz = gzopen((dir_ + "/day_1.tsv").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, day1.data(), static_cast<unsigned>(day1.size())),
            static_cast<int>(day1.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);

  CriteoSource spec;
  spec.add_paths(dir_ + "/day_*.tsv");
  spec.set_hash_buckets(1000);
  absl::StatusOr<std::unique_ptr<InMemorySource>> source = LoadCriteo(spec);
  ASSERT_TRUE(source.ok()) << source.status();
  const DatasetInfo& info = (*source)->info();
  EXPECT_EQ(info.num_examples, 3);
  EXPECT_EQ(info.dense_dim, 13);
  EXPECT_EQ(info.sparse_dim, 1000);
  EXPECT_EQ(info.num_fields, 26);
  EXPECT_EQ(info.num_classes, 2);
  ExampleBatch batch;
  ASSERT_TRUE((*source)->Fill({0, 1, 2}, &batch).ok());
  EXPECT_EQ(batch.labels, (std::vector<float>{1, 0, 1}));
  EXPECT_FLOAT_EQ(batch.dense.data<float>()[2 * 13], std::log1p(3.0));  // the gzipped line, last
  EXPECT_EQ(batch.sparse_ids[2 * 26], CategoricalId("C1", int64_t{0xb}, 1000));
}

TEST_F(CriteoFilesTest, NamesTheFileOfABadLineAndRefusesEmptyData) {
  std::ofstream(dir_ + "/bad.tsv") << Line("0", {}, {}) << "\n" << Line("1", {"x"}, {}) << "\n";
  std::ofstream(dir_ + "/empty.tsv") << "\n";
  CriteoSource spec;
  spec.add_paths(dir_ + "/bad.tsv");
  EXPECT_THAT(LoadCriteo(spec).status().message(),
              HasSubstr(dir_ + "/bad.tsv:2: integer feature I1"));
  spec.set_paths(0, dir_ + "/empty.tsv");
  EXPECT_THAT(LoadCriteo(spec).status().message(), HasSubstr("no examples"));
  spec.set_paths(0, dir_ + "/none-*.tsv");
  EXPECT_TRUE(absl::IsNotFound(LoadCriteo(spec).status()));
}

}  // namespace
}  // namespace pstrain
