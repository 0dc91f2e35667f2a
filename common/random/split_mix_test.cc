#include "common/random/split_mix.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

// The reference generator's first outputs from state 0 (each output is the
// finaliser of state + k * golden gamma): pinned, since shard placement and
// record orders depend on them.
TEST(SplitMix64Test, MatchesTheReferenceSequence) {
  EXPECT_EQ(SplitMix64(0), 0xe220a8397b1dcdafull);
  EXPECT_EQ(SplitMix64(0x9e3779b97f4a7c15ull), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(SplitMix64(2 * 0x9e3779b97f4a7c15ull), 0x06c45d188009454full);
}

}  // namespace
}  // namespace pstrain
