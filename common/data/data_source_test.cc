#include "common/data/data_source.h"

#include "common/data/test_files.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(DataSourceTest, OpensEachKind) {
  DataSpec spec;
  spec.mutable_fashion_mnist()->set_dir(testing_util::WriteToyImageDataset(30, 12));
  auto train = OpenExampleSource(spec, PassMode::kTrain);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ((*train)->num_examples(), 30);
  auto test = OpenExampleSource(spec, PassMode::kEval);
  ASSERT_TRUE(test.ok());
  EXPECT_EQ((*test)->num_examples(), 12);
  spec.mutable_fashion_mnist()->set_split(DATA_SPLIT_TRAIN);
  EXPECT_EQ((*OpenExampleSource(spec, PassMode::kEval))->num_examples(), 30);

  spec.mutable_csv()->set_path(testing_util::WriteTestFile("s.csv", "1,2\n0,1\n"));
  EXPECT_EQ((*OpenExampleSource(spec, PassMode::kTrain))->info().dense_dim, 1);
  spec.mutable_libsvm()->set_path(testing_util::WriteTestFile("s.svm", "1 4:1\n"));
  EXPECT_EQ((*OpenExampleSource(spec, PassMode::kTrain))->info().sparse_dim, 4);
  spec.mutable_synthetic_clicks()->set_num_examples(10);
  EXPECT_EQ((*OpenExampleSource(spec, PassMode::kTrain))->info().num_fields, 8);
  EXPECT_FALSE(OpenExampleSource(DataSpec(), PassMode::kTrain).ok());
}

// A source opened from a spec nobody validated obeys the spec's rules,
// with the messages of ValidateJobSpec.
TEST(DataSourceTest, RefusesFieldsOutOfRangeNamingThem) {
  DataSpec spec;
  spec.mutable_synthetic_clicks()->set_zipf_exponent(1.0);
  absl::Status status = OpenExampleSource(spec, PassMode::kTrain).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("train_data.synthetic_clicks.zipf_exponent must be > 1, got 1"),
            std::string::npos)
      << status;
  spec.mutable_synthetic_clicks()->set_zipf_exponent(1.5);
  spec.mutable_synthetic_clicks()->set_num_fields(-1);
  status = OpenExampleSource(spec, PassMode::kEval).status();
  EXPECT_NE(status.message().find("eval_data.synthetic_clicks.num_fields must be > 0, got -1"),
            std::string::npos)
      << status;
}

TEST(DataSourceTest, ReaderOptionsDefaults) {
  DataSpec spec;
  BatchReaderOptions train = BatchReaderOptionsFromSpec(spec, PassMode::kTrain);
  EXPECT_EQ(train.batch_size, 128);
  EXPECT_TRUE(train.shuffle);
  EXPECT_FALSE(BatchReaderOptionsFromSpec(spec, PassMode::kEval).shuffle);
  spec.set_shuffle(false);
  spec.set_batch_size(7);
  spec.set_epochs(3);
  BatchReaderOptions set = BatchReaderOptionsFromSpec(spec, PassMode::kTrain);
  EXPECT_FALSE(set.shuffle);
  EXPECT_EQ(set.batch_size, 7);
  EXPECT_EQ(set.epochs, 3);
}

}  // namespace
}  // namespace pstrain
