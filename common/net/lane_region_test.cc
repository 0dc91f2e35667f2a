#include "common/net/lane_region.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(LaneRegionTest, RegionsAreCheckedAgainstTheirSegmentAndTheirBytes) {
  LaneRegion region;
  region.set_offset(4096);
  region.set_size(1024);
  EXPECT_TRUE(RegionFits(region, 5120));
  EXPECT_FALSE(RegionFits(region, 5119));
  region.set_size(INT64_MAX);
  EXPECT_FALSE(RegionFits(region, 5120));
  region.set_size(1024);
  region.set_offset(-1);
  EXPECT_FALSE(RegionFits(region, 5120));
  region.set_offset(4096);

  SharedBytes bytes;
  bytes.set_offset(4096);
  bytes.set_size(1024);
  EXPECT_TRUE(RegionHolds(region, bytes));
  bytes.set_size(1025);
  EXPECT_FALSE(RegionHolds(region, bytes));
  bytes.set_offset(4095);
  bytes.set_size(1);
  EXPECT_FALSE(RegionHolds(region, bytes));
  bytes.set_offset(5000);
  bytes.set_size(INT64_MAX);
  EXPECT_FALSE(RegionHolds(region, bytes));
  bytes.set_size(-1);
  EXPECT_FALSE(RegionHolds(region, bytes));
}

TEST(LaneRegionTest, ARegionWithNegativeFiguresHoldsNothing) {
  LaneRegion region;
  region.set_offset(INT64_MIN);
  region.set_size(INT64_MAX);
  SharedBytes bytes;
  bytes.set_offset(0);
  bytes.set_size(8);
  EXPECT_FALSE(RegionHolds(region, bytes));
  region.set_offset(0);
  region.set_size(-8);
  EXPECT_FALSE(RegionHolds(region, bytes));
}

}  // namespace
}  // namespace pstrain
