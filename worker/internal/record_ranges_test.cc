#include "worker/internal/record_ranges.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

TEST(RecordRangesTest, CoalesceSortsMergesTouchingRangesAndDropsEmptyOnes) {
  const std::vector<RecordRange> merged =
      Coalesce({MakeRange(40, 48), MakeRange(8, 16), MakeRange(16, 24), MakeRange(30, 30),
                MakeRange(10, 12), MakeRange(44, 56)});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].begin(), 8);
  EXPECT_EQ(merged[0].end(), 24);
  EXPECT_EQ(merged[1].begin(), 40);
  EXPECT_EQ(merged[1].end(), 56);
  EXPECT_EQ(CountRecords(merged), 32);
  EXPECT_TRUE(Coalesce({}).empty());
}

}  // namespace
}  // namespace internal
}  // namespace worker
}  // namespace pstrain
