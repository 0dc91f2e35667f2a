#include "common/data/batch_reader.h"

#include <algorithm>
#include <set>
#include <vector>

#include "common/data/in_memory_source.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

// n examples whose label is their index, so batches reveal the order.
std::unique_ptr<InMemorySource> Indexed(int64_t n) {
  InMemorySource::Examples e;
  e.num_examples = n;
  for (int64_t i = 0; i < n; ++i) e.labels.push_back(static_cast<float>(i));
  return std::move(InMemorySource::Create(std::move(e))).value();
}

// Every label read until the end, in order, with the epochs seen.
std::vector<int64_t> ReadAll(BatchReader* reader, std::vector<int64_t>* sizes = nullptr) {
  std::vector<int64_t> labels;
  while (true) {
    auto batch = reader->Next();
    if (!batch.ok()) {
      EXPECT_EQ(batch.status().code(), absl::StatusCode::kOutOfRange);
      return labels;
    }
    if (sizes != nullptr) sizes->push_back(batch->size);
    for (float label : batch->labels) labels.push_back(static_cast<int64_t>(label));
  }
}

TEST(ShardRangeTest, CoversEverythingOnce) {
  int64_t next = 0;
  for (int shard = 0; shard < 3; ++shard) {
    auto range = ShardRange(10, shard, 3);
    ASSERT_TRUE(range.ok());
    EXPECT_EQ(range->begin, next);
    EXPECT_EQ(range->size(), shard == 0 ? 4 : 3);
    next = range->end;
  }
  EXPECT_EQ(next, 10);
  EXPECT_FALSE(ShardRange(10, 3, 3).ok());
  EXPECT_FALSE(ShardRange(10, 0, 0).ok());
}

TEST(BatchReaderTest, ReadsRangeInOrderWithEpochs) {
  auto source = Indexed(10);
  BatchReaderOptions options;
  options.batch_size = 3;
  options.range = {2, 7};
  options.epochs = 2;
  for (int prefetch : {0, 2}) {
    options.prefetch_batches = prefetch;
    auto reader = BatchReader::Create(source.get(), options);
    ASSERT_TRUE(reader.ok()) << reader.status();
    std::vector<int64_t> sizes;
    EXPECT_EQ(ReadAll(reader->get(), &sizes), (std::vector<int64_t>{2, 3, 4, 5, 6, 2, 3, 4, 5, 6}));
    EXPECT_EQ(sizes, (std::vector<int64_t>{3, 2, 3, 2}));
    EXPECT_EQ((*reader)->epochs_completed(), 2);
    EXPECT_EQ((*reader)->Next().status().code(), absl::StatusCode::kOutOfRange);
  }
}

TEST(BatchReaderTest, ShufflesEachEpochReproducibly) {
  auto source = Indexed(50);
  BatchReaderOptions options;
  options.batch_size = 7;
  options.shuffle = true;
  options.seed = 42;
  options.epochs = 2;
  auto first = ReadAll(BatchReader::Create(source.get(), options)->get());
  auto again = ReadAll(BatchReader::Create(source.get(), options)->get());
  ASSERT_EQ(first.size(), 100u);
  EXPECT_EQ(first, again);
  const std::vector<int64_t> epoch0(first.begin(), first.begin() + 50);
  const std::vector<int64_t> epoch1(first.begin() + 50, first.end());
  EXPECT_NE(epoch0, epoch1);
  std::vector<int64_t> sorted = epoch0;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);

  // Resuming at epoch 1 repeats epoch 1's order.
  options.start_epoch = 1;
  options.epochs = 1;
  EXPECT_EQ(ReadAll(BatchReader::Create(source.get(), options)->get()), epoch1);

  options.seed = 43;
  options.start_epoch = 0;
  EXPECT_NE(ReadAll(BatchReader::Create(source.get(), options)->get()), epoch0);
}

TEST(BatchReaderTest, ResumesMidEpochWithoutSkippingOrRepeating) {
  auto source = Indexed(30);
  BatchReaderOptions options;
  options.batch_size = 4;
  options.shuffle = true;
  options.seed = 5;
  options.epochs = 2;
  auto full = ReadAll(BatchReader::Create(source.get(), options)->get());
  ASSERT_EQ(full.size(), 60u);

  // Stop after 3 batches and remember the position.
  auto first = BatchReader::Create(source.get(), options);
  ASSERT_TRUE(first.ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*first)->Next().ok());
  EXPECT_EQ((*first)->position_epoch(), 0);
  EXPECT_EQ((*first)->position_offset(), 12);

  options.start_epoch = (*first)->position_epoch();
  options.start_offset = (*first)->position_offset();
  options.epochs = 2;  // epochs counted from start_epoch: the rest of 0, then 1
  auto resumed = ReadAll(BatchReader::Create(source.get(), options)->get());
  EXPECT_EQ(resumed, std::vector<int64_t>(full.begin() + 12, full.end()));

  options.start_offset = 30;
  EXPECT_FALSE(BatchReader::Create(source.get(), options).ok());
}

TEST(BatchReaderTest, RepeatsForeverAndStopsCleanly) {
  auto source = Indexed(4);
  BatchReaderOptions options;
  options.batch_size = 4;
  options.epochs = 0;
  options.prefetch_batches = 3;
  auto reader = BatchReader::Create(source.get(), options);
  ASSERT_TRUE(reader.ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE((*reader)->Next().ok());
  EXPECT_EQ((*reader)->epochs_completed(), 10);
  reader->reset();  // joins the prefetch thread while it waits for room
}

TEST(BatchReaderTest, RecycledBatchesAreRefilledInPlace) {
  InMemorySource::Examples e;
  e.num_examples = 6;
  e.dense_dim = 2;
  for (int64_t i = 0; i < 6; ++i) {
    e.labels.push_back(static_cast<float>(i));
    e.dense_floats.insert(e.dense_floats.end(), {i * 10.0f, i * 10.0f + 1});
  }
  auto source = std::move(InMemorySource::Create(std::move(e))).value();
  BatchReaderOptions options;
  options.batch_size = 2;
  options.prefetch_batches = 0;  // batches made on Next(), after each Recycle
  auto reader = BatchReader::Create(source.get(), options);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto first = (*reader)->Next();
  ASSERT_TRUE(first.ok());
  const float* storage = first->dense.data<float>();
  (*reader)->Recycle(*std::move(first));
  auto second = (*reader)->Next();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->dense.data<float>(), storage);
  EXPECT_EQ(second->labels, (std::vector<float>{2, 3}));
  EXPECT_EQ(second->dense.data<float>()[0], 20.0f);
  EXPECT_EQ(second->dense.data<float>()[3], 31.0f);
  (*reader)->Recycle(*std::move(second));
  auto last = (*reader)->Next();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->labels, (std::vector<float>{4, 5}));
  EXPECT_EQ(last->dense.data<float>()[2], 50.0f);
  EXPECT_EQ((*reader)->Next().status().code(), absl::StatusCode::kOutOfRange);
}

TEST(BatchReaderTest, RefusesBadOptions) {
  auto source = Indexed(4);
  BatchReaderOptions options;
  options.batch_size = 0;
  EXPECT_FALSE(BatchReader::Create(source.get(), options).ok());
  options.batch_size = 1;
  options.range = {2, 5};
  EXPECT_FALSE(BatchReader::Create(source.get(), options).ok());
}

}  // namespace
}  // namespace pstrain
