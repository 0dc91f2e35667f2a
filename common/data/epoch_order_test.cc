#include "common/data/epoch_order.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

std::vector<int64_t> RecordsOf(const EpochOrder& order) {
  std::vector<int64_t> positions(order.size()), records(order.size());
  std::iota(positions.begin(), positions.end(), 0);
  EXPECT_TRUE(order.RecordsAt(positions, absl::MakeSpan(records)).ok());
  return records;
}

std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<int64_t> Sequence(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Three files of 250, 100 and 130 records in blocks of 100: the files' last
// blocks are short.
BlockLayout ThreeFiles(int32_t window_blocks) {
  BlockLayout layout;
  layout.block_ends = {100, 200, 250, 350, 450, 480};
  layout.window_blocks = window_blocks;
  return layout;
}

TEST(EpochOrderTest, InMemoryShufflesEveryRecordTheSameWayForEveryReader) {
  const std::vector<int64_t> first = RecordsOf(*EpochOrder::InMemory(1000, true, 7, 0));
  EXPECT_EQ(first, RecordsOf(*EpochOrder::InMemory(1000, true, 7, 0)));
  EXPECT_NE(first, RecordsOf(*EpochOrder::InMemory(1000, true, 7, 1)));
  EXPECT_NE(first, RecordsOf(*EpochOrder::InMemory(1000, true, 8, 0)));
  EXPECT_EQ(Sorted(first), Sequence(1000));
  EXPECT_EQ(RecordsOf(*EpochOrder::InMemory(5, false, 7, 3)), Sequence(5));
}

TEST(EpochOrderTest, BlockedReadsEveryRecordOnceAndEachWindowFromItsOwnBlocks) {
  const BlockLayout layout = ThreeFiles(/*window_blocks=*/2);
  const std::vector<int64_t> records = RecordsOf(*EpochOrder::Blocked(layout, true, 7, 0));
  EXPECT_EQ(Sorted(records), Sequence(480));
  // Where each block's records were read, and the blocks by their first
  // position: the epoch's block order.
  std::vector<std::vector<int64_t>> positions(layout.num_blocks());
  for (size_t p = 0; p < records.size(); ++p) {
    positions[layout.BlockOf(records[p])].push_back(static_cast<int64_t>(p));
  }
  std::vector<int64_t> blocks = Sequence(layout.num_blocks());
  std::sort(blocks.begin(), blocks.end(),
            [&](int64_t a, int64_t b) { return positions[a][0] < positions[b][0]; });
  EXPECT_NE(blocks, Sequence(layout.num_blocks())) << "the blocks are not permuted";
  // Each pair of blocks in that order fills a run of positions of its own.
  int64_t window_begin = 0;
  for (size_t slot = 0; slot < blocks.size(); slot += 2) {
    std::vector<int64_t> window = positions[blocks[slot]];
    window.insert(window.end(), positions[blocks[slot + 1]].begin(),
                  positions[blocks[slot + 1]].end());
    std::sort(window.begin(), window.end());
    EXPECT_EQ(window.front(), window_begin);
    EXPECT_EQ(window.back(), window_begin + static_cast<int64_t>(window.size()) - 1);
    window_begin += static_cast<int64_t>(window.size());
  }
}

TEST(EpochOrderTest, BlockedWindowsOfFullBlocksStartAtMultiplesOfTheirSize) {
  // Full blocks 0, 1, 3, 4 fill the windows [0, 200) and [200, 400); the
  // short blocks 2 and 5, that end files, the last one.
  const BlockLayout layout = ThreeFiles(/*window_blocks=*/2);
  for (int64_t epoch = 0; epoch < 5; ++epoch) {
    const std::vector<int64_t> records = RecordsOf(*EpochOrder::Blocked(layout, true, 7, epoch));
    for (size_t p = 0; p < records.size(); ++p) {
      const int64_t block = layout.BlockOf(records[p]);
      const bool short_block = block == 2 || block == 5;
      EXPECT_EQ(short_block, p >= 400) << "position " << p << " of epoch " << epoch;
    }
  }
}

TEST(EpochOrderTest, BlockedShufflesAcrossTheWindowAndAnewEachEpoch) {
  const BlockLayout layout = ThreeFiles(/*window_blocks=*/2);
  const std::vector<int64_t> first = RecordsOf(*EpochOrder::Blocked(layout, true, 7, 0));
  EXPECT_EQ(first, RecordsOf(*EpochOrder::Blocked(layout, true, 7, 0)));
  EXPECT_NE(first, RecordsOf(*EpochOrder::Blocked(layout, true, 7, 1)));
  // Consecutive positions come from both blocks of the window, not one
  // block after the other.
  std::set<int64_t> blocks_of_first_ten;
  for (int p = 0; p < 10; ++p) blocks_of_first_ten.insert(layout.BlockOf(first[p]));
  EXPECT_EQ(blocks_of_first_ten.size(), 2u);
  EXPECT_EQ(RecordsOf(*EpochOrder::Blocked(layout, false, 7, 0)), Sequence(480));
}

// Checkpoints record finished positions, so the order a seed and an epoch
// give must never change: these values pin it.
TEST(EpochOrderTest, BlockedOrderIsPinned) {
  BlockLayout layout;
  layout.block_ends = {3, 6, 8};
  layout.window_blocks = 2;
  EXPECT_THAT(RecordsOf(*EpochOrder::Blocked(layout, true, 7, 0)),
              ::testing::ElementsAre(4, 5, 1, 2, 3, 0, 6, 7));
}

TEST(EpochOrderTest, PositionsOutsideTheEpochAreOutOfRange) {
  std::vector<int64_t> records(1);
  const std::vector<int64_t> outside = {480};
  EXPECT_TRUE(absl::IsOutOfRange(
      EpochOrder::Blocked(ThreeFiles(2), true, 1, 0)->RecordsAt(outside, absl::MakeSpan(records))));
  const std::vector<int64_t> negative = {-1};
  EXPECT_TRUE(absl::IsOutOfRange(
      EpochOrder::InMemory(10, true, 1, 0)->RecordsAt(negative, absl::MakeSpan(records))));
}

}  // namespace
}  // namespace pstrain
