#include "bench/compute/fma_peak.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(FmaPeakTest, NeverWiderThanAllowed) {
  EXPECT_NE(WidestFma(FmaWidth::kAvx2), FmaWidth::kAvx512);
  EXPECT_EQ(WidestFma(FmaWidth::kNone), FmaWidth::kNone);
  EXPECT_EQ(MeasureFmaPeak(FmaWidth::kNone, 0.01).gflops, 0);
}

TEST(FmaPeakTest, MeasuresWhatTheCpuHas) {
  for (FmaWidth allowed : {FmaWidth::kAvx2, FmaWidth::kAvx512}) {
    const FmaWidth width = WidestFma(allowed);
    if (width == FmaWidth::kNone) continue;  // a CPU without AVX2
    const FmaPeak peak = MeasureFmaPeak(width, 0.05);
    EXPECT_EQ(peak.width, width);
    // One core: more than a scalar FMA per nanosecond, less than a
    // thousand vector ones.
    EXPECT_GT(peak.gflops, 2) << FmaWidthName(width);
    EXPECT_LT(peak.gflops, 2000) << FmaWidthName(width);
  }
}

}  // namespace
}  // namespace pstrain
