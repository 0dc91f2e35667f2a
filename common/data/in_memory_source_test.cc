#include "common/data/in_memory_source.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

InMemorySource::Examples SparseExamples() {
  InMemorySource::Examples e;
  e.num_examples = 3;
  e.dense_dim = 2;
  e.dense_floats = {1, 2, 3, 4, 5, 6};
  e.sparse_ids = {0, 4, 2, 1, 3, 4};
  e.sparse_values = {1, 2, 3, 4, 5, 6};
  e.row_splits = {0, 2, 3, 6};
  e.sparse_dim = 5;
  e.labels = {0, 1, 1};
  return e;
}

TEST(InMemorySourceTest, FillsGatheredBatch) {
  auto source = InMemorySource::Create(SparseExamples());
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->info().num_classes, 2);
  EXPECT_EQ((*source)->info().sparse_dim, 5);
  ExampleBatch batch;
  ASSERT_TRUE((*source)->Fill({2, 0}, &batch).ok());
  EXPECT_EQ(batch.size, 2);
  EXPECT_EQ(batch.dense_dim(), 2);
  EXPECT_EQ(batch.dense.data<float>()[0], 5);
  EXPECT_EQ(batch.dense.data<float>()[3], 2);
  EXPECT_EQ(batch.row_splits, (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(batch.sparse_ids, (std::vector<int64_t>{1, 3, 4, 0, 4}));
  EXPECT_EQ(batch.sparse_values, (std::vector<float>{4, 5, 6, 1, 2}));
  EXPECT_EQ(batch.labels, (std::vector<float>{1, 0}));
  EXPECT_EQ((*source)->Fill({3}, &batch).code(), absl::StatusCode::kOutOfRange);
}

TEST(InMemorySourceTest, OneIdPerFieldIsCheckedAndReported) {
  InMemorySource::Examples e = SparseExamples();
  e.row_splits = {0, 2, 4, 6};
  e.num_fields = 2;
  auto source = InMemorySource::Create(e);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->info().num_fields, 2);

  e.row_splits = {0, 2, 3, 6};  // example 1 has one id, example 2 three
  auto refused = InMemorySource::Create(e);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "example 1 has 1 ids, not one per each of 2 fields");
  EXPECT_EQ((*InMemorySource::Create(SparseExamples()))->info().num_fields, 0);
}

TEST(InMemorySourceTest, ScalesEveryBytePixel) {
  // Rows of 37 bytes: two 16-byte blocks and a tail of 5, at offsets that
  // are not 16-byte aligned; every byte value appears.
  constexpr int64_t kDim = 37;
  constexpr int64_t kExamples = 9;
  std::string pixels;
  for (int64_t i = 0; i < kDim * kExamples; ++i) pixels += static_cast<char>(i * 7 % 256);
  InMemorySource::Examples e;
  e.num_examples = kExamples;
  e.dense_dim = kDim;
  e.dense_bytes = ByteBuffer::CopyOf(pixels);
  e.byte_scale = 1.0f / 255.0f;
  e.labels.assign(kExamples, 0);
  auto source = InMemorySource::Create(std::move(e));
  ASSERT_TRUE(source.ok()) << source.status();
  ExampleBatch batch;
  const std::vector<int64_t> order = {8, 3, 0, 5, 1, 7, 2, 6, 4};
  ASSERT_TRUE((*source)->Fill(order, &batch).ok());
  for (size_t row = 0; row < order.size(); ++row) {
    for (int64_t j = 0; j < kDim; ++j) {
      const auto byte = static_cast<uint8_t>(pixels[order[row] * kDim + j]);
      ASSERT_EQ(batch.dense.data<float>()[row * kDim + j], byte * (1.0f / 255.0f))
          << "example " << order[row] << " pixel " << j;
    }
  }
}

TEST(InMemorySourceTest, RefusesInconsistentParts) {
  auto e = SparseExamples();
  e.labels.pop_back();
  EXPECT_EQ(InMemorySource::Create(e).status().code(), absl::StatusCode::kInvalidArgument);
  e = SparseExamples();
  e.sparse_ids[1] = 5;
  EXPECT_EQ(InMemorySource::Create(e).status().code(), absl::StatusCode::kInvalidArgument);
  e = SparseExamples();
  e.row_splits = {0, 3, 2, 6};
  EXPECT_EQ(InMemorySource::Create(e).status().code(), absl::StatusCode::kInvalidArgument);
  e = SparseExamples();
  e.dense_floats.push_back(7);
  EXPECT_EQ(InMemorySource::Create(e).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(InMemorySourceTest, ClassCount) {
  EXPECT_EQ(ClassCountOf({0, 3, 1}), 4);
  EXPECT_EQ(ClassCountOf({0, 0}), 2);
  EXPECT_EQ(ClassCountOf({0, 1.5f}), 0);
  EXPECT_EQ(ClassCountOf({-1, 1}), 0);
}

}  // namespace
}  // namespace pstrain
