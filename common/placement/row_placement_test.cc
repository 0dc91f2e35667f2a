#include "common/placement/row_placement.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

// The placement is a wire contract between workers and shards: these values
// follow from the formula in protos/parameter_server.proto (Mix(0) is
// splitmix64's first output from seed 0, 0xe220a8397b1dcdaf) and must never
// change.
TEST(RowPlacementTest, FollowsTheDocumentedFormula) {
  EXPECT_EQ(16294208416658607535ull % 7, 2u);
  EXPECT_EQ(RowShard(0, 7), 2);
  EXPECT_EQ(RowShard(1, 3), 2);
  EXPECT_EQ(RowShard(42, 7), 5);
  EXPECT_EQ(RowShard(-1, 2), 0);
  EXPECT_EQ(RowShard(-1, 3), 2);
  EXPECT_EQ(RowShard(std::numeric_limits<int64_t>::max(), 3), 0);
  EXPECT_EQ(RowShard(std::numeric_limits<int64_t>::min(), 7), 6);
}

TEST(RowPlacementTest, OneShardHoldsEverything) {
  for (int64_t id : {int64_t{0}, int64_t{-5}, int64_t{1} << 40}) EXPECT_EQ(RowShard(id, 1), 0);
}

TEST(RowPlacementTest, ConsecutiveIdsSpreadEvenly) {
  constexpr int kShards = 5;
  constexpr int kIds = 100000;
  std::vector<int> count(kShards);
  for (int64_t id = 0; id < kIds; ++id) {
    const int shard = RowShard(id, kShards);
    ASSERT_GE(shard, 0);
    ASSERT_LT(shard, kShards);
    ++count[shard];
  }
  for (int c : count) EXPECT_NEAR(c, kIds / kShards, kIds / kShards * 0.03);
}

}  // namespace
}  // namespace pstrain
