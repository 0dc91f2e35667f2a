#include "common/data/csv_reader.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/data/categorical_id.h"
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

// A CSV as people keep it: a header, the label by name, a text column, a
// column no one reads, missing values.
constexpr char kHouses[] =
    "id,district,rooms,area,price\n"
    "a1,north,3,72.5,310\n"
    "a2,south,,55,205.5\n"
    "a3,,4,NA,402\n";

CsvSource Houses() {
  CsvSource options;
  options.set_has_header(true);
  options.set_label("price");
  options.add_categorical("district");
  options.add_ignore("id");
  options.set_hash_buckets(1000);
  CsvFill* rooms = options.add_fill_missing();
  rooms->set_column("rooms");
  rooms->set_value(2);
  CsvFill* any = options.add_fill_missing();
  any->set_column("*");
  any->set_value(-1);
  return options;
}

TEST(CsvReaderTest, TakesColumnsByNameWithCategoriesAndFills) {
  auto source = ParseCsv(kHouses, Houses(), "houses.csv");
  ASSERT_TRUE(source.ok()) << source.status();
  const DatasetInfo& info = (*source)->info();
  EXPECT_EQ(info.num_examples, 3);
  EXPECT_EQ(info.dense_dim, 2);  // rooms, area
  EXPECT_EQ(info.sparse_dim, 1000);
  EXPECT_EQ(info.num_fields, 1);
  ExampleBatch batch;
  ASSERT_TRUE((*source)->Fill({0, 1, 2}, &batch).ok());
  EXPECT_EQ(batch.labels, (std::vector<float>{310, 205.5f, 402}));
  const float* x = batch.dense.data<float>();
  // rooms' own fill (2) wins over "*" (-1), which fills area.
  EXPECT_EQ(std::vector<float>(x, x + 6), (std::vector<float>{3, 72.5f, 2, 55, 4, -1}));
  EXPECT_EQ(batch.sparse_ids, (std::vector<int64_t>{CategoricalId("district", "north", 1000),
                                                    CategoricalId("district", "south", 1000),
                                                    CategoricalId("district", "", 1000)}));
}

TEST(CsvReaderTest, FeaturesByNameTakeTheirOrder) {
  CsvSource options;
  options.set_has_header(true);
  options.set_label("price");
  options.add_features("area");
  options.add_features("rooms");
  auto source = ParseCsv("rooms,note,area,price\n3,big,70,300\n", options, "h.csv");
  ASSERT_TRUE(source.ok()) << source.status();
  ExampleBatch batch;
  ASSERT_TRUE((*source)->Fill({0}, &batch).ok());
  const float* x = batch.dense.data<float>();
  EXPECT_EQ(std::vector<float>(x, x + 2), (std::vector<float>{70, 3}));
  EXPECT_EQ((*source)->info().sparse_dim, 0);
}

TEST(CsvReaderTest, RefusesNamesAndMissingValuesSayingWhatToDo) {
  CsvSource options = Houses();
  options.set_label("cost");
  EXPECT_EQ(ParseCsv(kHouses, options, "houses.csv").status().message(),
            "houses.csv:1: label names column \"cost\", which the header does not hold; it "
            "holds \"id\", \"district\", \"rooms\", \"area\", \"price\"");
  options = Houses();
  options.clear_fill_missing();
  EXPECT_EQ(ParseCsv(kHouses, options, "houses.csv").status().message(),
            "houses.csv:3: column 3 (\"rooms\") is missing (\"\"); fill_missing { column: "
            "\"rooms\" value: ... } gives it a value");
  EXPECT_EQ(
      ParseCsv("id,district,rooms,area,price\na,b,1,2,\n", Houses(), "h.csv").status().message(),
      "h.csv:2: column 5 (\"price\"), the label, is missing");
  CsvSource by_name;
  by_name.set_label("price");
  by_name.set_has_header(true);
  // A name the header gives twice is refused only when the spec uses it.
  EXPECT_TRUE(ParseCsv("a,a,price\n1,2,3\n", by_name, "h.csv").ok());
  by_name.add_features("a");
  EXPECT_EQ(ParseCsv("a,a,price\n1,2,3\n", by_name, "h.csv").status().message(),
            "h.csv:1: features names column \"a\", which the header holds twice (columns 1 and 2)");
}

TEST(CsvReaderTest, StandardizationComesFromTheDataAfterFills) {
  CsvSource options = Houses();
  options.set_standardize(true);
  auto source = ParseCsv(kHouses, options, "houses.csv");
  ASSERT_TRUE(source.ok()) << source.status();
  const DatasetInfo& info = (*source)->info();
  // rooms 3, 2 (filled), 4: mean 3, deviation sqrt(2/3). area 72.5, 55,
  // -1 (filled by "*").
  ASSERT_EQ(info.dense_mean.size(), 2u);
  EXPECT_FLOAT_EQ(info.dense_mean[0], 3);
  EXPECT_FLOAT_EQ(info.dense_scale[0], 1 / std::sqrt(2.0f / 3));
  EXPECT_FLOAT_EQ(info.dense_mean[1], (72.5f + 55 - 1) / 3);
  EXPECT_EQ(info.dense_names, (std::vector<std::string>{"rooms", "area"}));
  EXPECT_EQ(info.dense_fill, (std::vector<float>{2, -1}));
  // The source keeps the raw values; the model standardises what it reads.
  ExampleBatch batch;
  ASSERT_TRUE((*source)->Fill({0}, &batch).ok());
  EXPECT_FLOAT_EQ(batch.dense.data<float>()[1], 72.5f);
  // A constant feature is only centred.
  options = Options();
  options.set_standardize(true);
  auto constant = ParseCsv("1,5\n0,5\n", options, "c.csv");
  ASSERT_TRUE(constant.ok());
  EXPECT_EQ((*constant)->info().dense_scale, (std::vector<float>{1}));
  EXPECT_TRUE((*source)->info().dense_mean.size() == 2 &&
              ParseCsv(kHouses, Houses(), "h.csv").value()->info().dense_mean.empty());
}

TEST(CsvReaderTest, KeepsWhereTheLabelsThatDecideTheClassesAre) {
  auto source = ParseCsv("y,x\n1,0\n7,0\n-1,0\n7,0\n0.5,0\n", Options(0, true), "l.csv");
  ASSERT_TRUE(source.ok()) << source.status();
  const LabelPlaces& places = (*source)->info().label_places;
  ASSERT_TRUE(places.largest.has_value());
  EXPECT_EQ(places.largest->label, 7);
  EXPECT_EQ(places.largest->where, "l.csv:3");
  ASSERT_TRUE(places.first_non_class.has_value());
  EXPECT_EQ(places.first_non_class->label, -1);
  EXPECT_EQ(places.first_non_class->where, "l.csv:4");
}

TEST(CsvReaderTest, QuotesAShortPrefixOfAHugeField) {
  const std::string huge(1 << 20, '7');
  auto source = ParseCsv(absl::StrCat("1,", huge, "x\n"), Options(), "big.csv");
  ASSERT_FALSE(source.ok());
  EXPECT_LT(source.status().message().size(), 200u);
  EXPECT_NE(source.status().message().find("(1048577 bytes)"), std::string::npos)
      << source.status().message();
}

TEST(CsvReaderTest, EveryFileNeedsTheFirstFilesHeader) {
  CsvSource options;
  options.set_has_header(true);
  options.set_label("y");
  options.add_paths(testing_util::WriteTestFile("h1.csv", "x,y\n1,2\n"));
  options.add_paths(testing_util::WriteTestFile("h2.csv", "y,x\n1,2\n"));
  auto source = LoadCsv(options);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find("h2.csv:1: the header \"y,x\" is not the first "
                                           "file's, \"x,y\""),
            std::string::npos)
      << source.status().message();
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
