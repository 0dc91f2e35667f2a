#include "common/clock/interval_gate.h"

#include "common/clock/fake_clock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(IntervalGateTest, OpensFirstThenOncePerInterval) {
  FakeClock clock;
  IntervalGate gate(clock, absl::Seconds(10));
  EXPECT_TRUE(gate.Open());
  EXPECT_FALSE(gate.Open());
  clock.Advance(absl::Seconds(9));
  EXPECT_FALSE(gate.Open());
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(gate.Open());
  // The interval counts from the last opening, not from a fixed grid.
  clock.Advance(absl::Seconds(25));
  EXPECT_TRUE(gate.Open());
  clock.Advance(absl::Seconds(9));
  EXPECT_FALSE(gate.Open());
}

}  // namespace
}  // namespace pstrain
