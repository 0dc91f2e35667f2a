#include "worker/training_data.h"

#include <algorithm>
#include <set>

#include "common/data/in_memory_source.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace worker {
namespace {

// Record i has the single dense feature i.
std::unique_ptr<InMemorySource> Records(int64_t n) {
  InMemorySource::Examples examples;
  examples.num_examples = n;
  examples.dense_dim = 1;
  for (int64_t i = 0; i < n; ++i) {
    examples.dense_floats.push_back(static_cast<float>(i));
    examples.labels.push_back(static_cast<float>(i % 2));
  }
  return *InMemorySource::Create(std::move(examples));
}

// Every position's record, in order.
std::vector<int64_t> RecordsOf(const EpochOrder& order) {
  std::vector<int64_t> positions(order.size()), records(order.size());
  for (int64_t p = 0; p < order.size(); ++p) positions[p] = p;
  EXPECT_TRUE(order.RecordsAt(positions, absl::MakeSpan(records)).ok());
  return records;
}

TEST(EpochOrdersTest, EachEpochIsAPermutationThatEveryWorkerAgreesOn) {
  std::unique_ptr<InMemorySource> source = Records(100);
  EpochOrders a(source.get(), /*shuffle=*/true, 7), b(source.get(), true, 7);
  const std::vector<int64_t> first = RecordsOf(*a.Order(0));
  EXPECT_EQ(first, RecordsOf(*b.Order(0)));
  EXPECT_NE(first, RecordsOf(*a.Order(1)));
  std::vector<int64_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  std::unique_ptr<InMemorySource> five = Records(5);
  EpochOrders in_order(five.get(), /*shuffle=*/false, 7);
  EXPECT_EQ(RecordsOf(*in_order.Order(3)), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(LeaseBatchReaderTest, BatchesCoverTheLeaseInOrderAndSayWhichPositions) {
  std::unique_ptr<InMemorySource> source = Records(50);
  EpochOrders orders(source.get(), true, 1);
  const std::vector<int64_t> order = RecordsOf(*orders.Order(0));
  TrainingDataOptions options;
  options.batch_size = 8;
  auto reader = *LeaseBatchReader::Create(source.get(), orders.Order(0), 10, 30, options);
  int64_t expected_begin = 10;
  while (true) {
    absl::StatusOr<LeaseBatch> batch = reader->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_EQ(batch->begin, expected_begin);
    EXPECT_EQ(batch->end - batch->begin, batch->batch.size);
    for (int64_t i = 0; i < batch->batch.size; ++i) {
      // Position p holds record order[p], whose feature is its index.
      EXPECT_EQ(batch->batch.dense.data<float>()[i], order[batch->begin + i]);
    }
    expected_begin = batch->end;
  }
  EXPECT_EQ(expected_begin, 30);
  EXPECT_EQ(reader->next_position(), 30);
}

TEST(LeaseBatchReaderTest, RefusesRangesOutsideTheData) {
  std::unique_ptr<InMemorySource> source = Records(10);
  EpochOrders orders(source.get(), false, 0);
  EXPECT_TRUE(absl::IsInvalidArgument(
      LeaseBatchReader::Create(source.get(), orders.Order(0), 5, 11, {}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      LeaseBatchReader::Create(source.get(), orders.Order(0), 5, 5, {}).status()));
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
