#include "server/coordinator/internal/range_set.h"

#include <ostream>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace internal {

void PrintTo(const Range& r, std::ostream* os) { *os << "[" << r.begin << ", " << r.end << ")"; }

namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(RangeSetTest, CoalescesTouchingRangesInAnyOrder) {
  RangeSet set;
  EXPECT_TRUE(set.Add({5, 9}));
  EXPECT_TRUE(set.Add({12, 20}));
  EXPECT_TRUE(set.Add({0, 5}));
  EXPECT_TRUE(set.Add({9, 12}));
  EXPECT_THAT(set.ranges(), ElementsAre(Range{0, 20}));
  EXPECT_EQ(set.count(), 20);
}

TEST(RangeSetTest, RefusesOverlapsAndChangesNothing) {
  RangeSet set;
  ASSERT_TRUE(set.Add({10, 20}));
  EXPECT_FALSE(set.Add({19, 25}));
  EXPECT_FALSE(set.Add({5, 11}));
  EXPECT_FALSE(set.Add({12, 13}));
  EXPECT_FALSE(set.Add({0, 30}));
  EXPECT_THAT(set.ranges(), ElementsAre(Range{10, 20}));
  EXPECT_EQ(set.count(), 10);
}

TEST(RangeSetTest, EmptyRangeIsANoOp) {
  RangeSet set;
  EXPECT_TRUE(set.Add({3, 3}));
  EXPECT_TRUE(set.empty());
  EXPECT_FALSE(set.Overlaps({3, 3}));
}

TEST(RangeSetTest, GapsAreTheComplementWithinBounds) {
  RangeSet set;
  ASSERT_TRUE(set.Add({2, 4}));
  ASSERT_TRUE(set.Add({6, 8}));
  EXPECT_THAT(set.Gaps({0, 10}), ElementsAre(Range{0, 2}, Range{4, 6}, Range{8, 10}));
  EXPECT_THAT(set.Gaps({3, 7}), ElementsAre(Range{4, 6}));
  EXPECT_THAT(set.Gaps({2, 4}), IsEmpty());
  EXPECT_THAT(RangeSet().Gaps({0, 3}), ElementsAre(Range{0, 3}));
}

// Against a plain bitmap, over random additions.
TEST(RangeSetTest, AgreesWithABitmap) {
  std::mt19937 random(7);
  constexpr int kSize = 200;
  RangeSet set;
  std::vector<bool> bits(kSize, false);
  for (int i = 0; i < 2000; ++i) {
    const int64_t begin = random() % kSize;
    const int64_t end = begin + random() % 8;
    if (end > kSize) continue;
    bool overlaps = false;
    for (int64_t j = begin; j < end; ++j) overlaps = overlaps || bits[j];
    ASSERT_EQ(set.Overlaps({begin, end}), overlaps);
    ASSERT_EQ(set.Add({begin, end}), !overlaps);
    if (!overlaps) {
      for (int64_t j = begin; j < end; ++j) bits[j] = true;
    }
  }
  int64_t count = 0;
  std::vector<Range> ranges = set.ranges();
  for (size_t k = 0; k < ranges.size(); ++k) {
    if (k > 0) {
      ASSERT_LT(ranges[k - 1].end, ranges[k].begin) << "not coalesced";
    }
    for (int64_t j = ranges[k].begin; j < ranges[k].end; ++j) ASSERT_TRUE(bits[j]);
    count += ranges[k].size();
  }
  EXPECT_EQ(count, set.count());
  EXPECT_EQ(count, std::count(bits.begin(), bits.end(), true));
}

}  // namespace
}  // namespace internal
}  // namespace coordinator
}  // namespace pstrain
