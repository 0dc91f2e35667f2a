#include "server/ps/gradient_copy.h"

#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;

TEST(GradientCopyTest, OutlivesTheBorrowedBuffersAndPutsSegmentsTogether) {
  std::vector<float> low = {1, 2}, high = {3, 4}, rows = {5, 6, 7, 8};
  std::vector<int64_t> ids = {9, 3};
  std::vector<DenseSegment> segments = {{2, high}, {0, low}};
  GradientCopy copy({GradientRef{0, false, {}, {}, segments}, GradientRef{1, true, ids, rows, {}}});
  // The pusher's buffers are reused for its next push.
  low = {0, 0};
  high = {0, 0};
  rows = {0, 0, 0, 0};
  ids = {0, 0};
  const GradientCopy moved = std::move(copy);
  const std::vector<GradientRef> refs = moved.refs();
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0].variable, 0);
  EXPECT_FALSE(refs[0].rows);
  EXPECT_TRUE(refs[0].segments.empty());
  EXPECT_THAT(refs[0].values, ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(refs[1].variable, 1);
  EXPECT_TRUE(refs[1].rows);
  EXPECT_THAT(refs[1].ids, ElementsAre(9, 3));
  EXPECT_THAT(refs[1].values, ElementsAre(5, 6, 7, 8));
}

}  // namespace
}  // namespace pstrain
