#include "common/data/csv_reader.h"

#include <string>

#include "common/data/test_files.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

CsvSource Options(int label_column = 0, bool header = false, const std::string& delimiter = "") {
  CsvSource options;
  options.set_label_column(label_column);
  options.set_has_header(header);
  options.set_delimiter(delimiter);
  return options;
}

TEST(CsvReaderTest, ParsesFeaturesAndLabel) {
  auto source = ParseCsv("x1;y;x2\r\n1.5;0;-2\n\n3;1;4e-1\n", Options(1, true, ";"), "d.csv");
  ASSERT_TRUE(source.ok()) << source.status();
  const DatasetInfo& info = (*source)->info();
  EXPECT_EQ(info.num_examples, 2);
  EXPECT_EQ(info.dense_dim, 2);
  EXPECT_EQ(info.num_classes, 2);
  ExampleBatch batch;
  ASSERT_TRUE((*source)->Fill({1, 0}, &batch).ok());
  EXPECT_EQ(batch.labels, (std::vector<float>{1, 0}));
  const float* x = batch.dense.data<float>();
  EXPECT_FLOAT_EQ(x[0], 3);
  EXPECT_FLOAT_EQ(x[1], 0.4f);
  EXPECT_FLOAT_EQ(x[2], 1.5f);
  EXPECT_FLOAT_EQ(x[3], -2);
}

TEST(CsvReaderTest, RealLabelsMeanRegression) {
  auto source = ParseCsv("0.5,1\n1.25,2\n", Options(), "r.csv");
  ASSERT_TRUE(source.ok());
  EXPECT_EQ((*source)->info().num_classes, 0);
}

TEST(CsvReaderTest, RefusesMalformedInputNamingTheLine) {
  auto bad_field = ParseCsv("1,2,3\n4,five,6\n", Options(), "data.csv");
  EXPECT_EQ(bad_field.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_field.status().message(), "data.csv:2: column 2: \"five\" is not a number");
  auto ragged = ParseCsv("1,2,3\n4,5\n", Options(), "data.csv");
  EXPECT_EQ(ragged.status().message(), "data.csv:2: 2 columns, the first line had 3");
  auto nan = ParseCsv("1,nan\n", Options(), "data.csv");
  EXPECT_NE(nan.status().message().find("data.csv:1: column 2"), std::string::npos);
  auto empty_field = ParseCsv("1,,3\n", Options(), "data.csv");
  EXPECT_FALSE(empty_field.ok());
  EXPECT_FALSE(ParseCsv("1,2\n", Options(2), "data.csv").ok());
  EXPECT_FALSE(ParseCsv("1,2\n", Options(0, false, ",,"), "data.csv").ok());
  EXPECT_FALSE(ParseCsv("header only\n", Options(0, true), "data.csv").ok());
}

TEST(CsvReaderTest, LoadsFilesAndReportsMissingOnes) {
  CsvSource options = Options();
  options.set_path(testing_util::WriteTestFile("ok.csv.gz", "1,2\n0,3\n", /*gzip=*/true));
  auto source = LoadCsv(options);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->num_examples(), 2);
  options.set_path(testing_util::WriteTestFile("bad.csv", "1,2\n0,x\n"));
  auto bad = LoadCsv(options);
  EXPECT_NE(bad.status().message().find("bad.csv:2:"), std::string::npos) << bad.status();
  options.set_path("/nonexistent.csv");
  EXPECT_EQ(LoadCsv(options).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace pstrain
