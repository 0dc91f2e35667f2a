#include "common/data/libsvm_reader.h"

#include <string>

#include "common/data/test_files.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(LibsvmReaderTest, ParsesSparseRowsAndRelabelsPlusMinusOne) {
  auto source = ParseLibsvm("+1 1:0.5 3:2  # first\n-1 2:1.5\n\n-1\n", LibsvmSource(), "a.svm");
  ASSERT_TRUE(source.ok()) << source.status();
  const DatasetInfo& info = (*source)->info();
  EXPECT_EQ(info.num_examples, 3);
  EXPECT_EQ(info.sparse_dim, 3);  // largest index 3, 1-based
  EXPECT_EQ(info.dense_dim, 0);
  EXPECT_EQ(info.num_classes, 2);
  ExampleBatch batch;
  ASSERT_TRUE((*source)->Fill({0, 1, 2}, &batch).ok());
  EXPECT_EQ(batch.labels, (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(batch.row_splits, (std::vector<int64_t>{0, 2, 3, 3}));
  EXPECT_EQ(batch.sparse_ids, (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(batch.sparse_values, (std::vector<float>{0.5f, 2, 1.5f}));
}

TEST(LibsvmReaderTest, ZeroBasedAndFixedWidth) {
  LibsvmSource options;
  options.set_zero_based(true);
  options.set_num_features(10);
  auto source = ParseLibsvm("2 0:1 9:1\n0 4:3\n", options, "b.svm");
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->info().sparse_dim, 10);
  EXPECT_EQ((*source)->info().num_classes, 3);
  auto beyond = ParseLibsvm("1 10:1\n", options, "b.svm");
  EXPECT_EQ(beyond.status().message(), "b.svm:1: index 10 beyond num_features 10");
}

TEST(LibsvmReaderTest, RefusesMalformedInputNamingTheLine) {
  const LibsvmSource options;
  auto order = ParseLibsvm("1 1:1 5:1\n0 3:1 2:1\n", options, "c.svm");
  EXPECT_EQ(order.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(order.status().message(),
            "c.svm:2: index 2 after 3: indices must be strictly ascending");
  auto repeated = ParseLibsvm("1 4:1 4:2\n", options, "c.svm");
  EXPECT_NE(repeated.status().message().find("strictly ascending"), std::string::npos);
  auto zero = ParseLibsvm("1 0:1\n", options, "c.svm");
  EXPECT_EQ(zero.status().message(), "c.svm:1: index \"0\" is not an integer >= 1");
  auto label = ParseLibsvm("yes 1:1\n", options, "c.svm");
  EXPECT_EQ(label.status().message(), "c.svm:1: label \"yes\" is not a number");
  auto value = ParseLibsvm("1 1:x\n", options, "c.svm");
  EXPECT_EQ(value.status().message(), "c.svm:1: value \"x\" of index 1 is not a number");
  auto pair = ParseLibsvm("1 1:1\n0 7\n", options, "c.svm");
  EXPECT_EQ(pair.status().message(), "c.svm:2: \"7\" is not an index:value pair");
  EXPECT_FALSE(ParseLibsvm("# nothing\n", options, "c.svm").ok());
}

TEST(LibsvmReaderTest, LoadsFiles) {
  LibsvmSource options;
  options.set_path(testing_util::WriteTestFile("d.svm", "1 1:1\n0 2:1\n"));
  auto source = LoadLibsvm(options);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->num_examples(), 2);
  options.set_path("/nonexistent.svm");
  EXPECT_EQ(LoadLibsvm(options).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace pstrain
