#include "common/data/epoch_shuffle.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

std::vector<int64_t> Order(uint64_t seed, int64_t epoch) {
  std::vector<int64_t> records(1000);
  std::iota(records.begin(), records.end(), 0);
  ShuffleForEpoch(seed, epoch, absl::MakeSpan(records));
  return records;
}

TEST(EpochShuffleTest, AnEpochsOrderDependsOnlyOnSeedAndEpoch) {
  EXPECT_EQ(Order(7, 3), Order(7, 3));
  EXPECT_NE(Order(7, 3), Order(7, 4));
  EXPECT_NE(Order(7, 3), Order(8, 3));
  std::vector<int64_t> sorted = Order(7, 3);
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> all(1000);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted, all) << "a shuffle keeps every record once";
}

TEST(EpochShuffleTest, AnEpochOrderOfARangeIsThatRangeShuffledOrInSequence) {
  std::vector<int64_t> in_sequence(4);
  FillEpochOrder(10, RecordOrder::kInSequence, 7, 3, absl::MakeSpan(in_sequence));
  EXPECT_EQ(in_sequence, (std::vector<int64_t>{10, 11, 12, 13}));

  std::vector<int64_t> shuffled(1000);
  FillEpochOrder(0, RecordOrder::kShuffled, 7, 3, absl::MakeSpan(shuffled));
  EXPECT_EQ(shuffled, Order(7, 3));
}

}  // namespace
}  // namespace pstrain
