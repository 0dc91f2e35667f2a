#include "bench/compute/copy_peak.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(CopyPeakTest, IsWithinWhatOneCoreCanMove) {
  // 16 MiB in all: past the L2 of any core, so that a copy that moved
  // nothing (a few nanoseconds) would show petabytes a second.
  const double bytes_per_second = CopyPeakBytesPerSecond(16 << 20, 5);
  EXPECT_GT(bytes_per_second, 1e8);
  EXPECT_LT(bytes_per_second, 2e12);
}

TEST(CopyPeakTest, TakesAnyWorkingSet) {
  for (int64_t bytes : {0, 1, 4097, 1 << 20}) {
    EXPECT_GT(CopyPeakBytesPerSecond(bytes, 2), 0) << bytes;
  }
}

}  // namespace
}  // namespace pstrain
