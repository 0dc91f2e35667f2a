#include "worker/push_incarnation.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace worker {
namespace {

TEST(PushIncarnationTest, ALaterRunNumbersAboveAnEarlierOneWhateverTheRandomBits) {
  const absl::Time start = absl::FromUnixSeconds(1795000000);
  const uint64_t earlier = NewPushIncarnation(start, ~uint64_t{0});
  const uint64_t later = NewPushIncarnation(start + absl::Microseconds(1), 0);
  EXPECT_LT(earlier, later);
  // A restarted process a day later, with the smallest random bits.
  EXPECT_LT(earlier, NewPushIncarnation(start + absl::Hours(24), 0));
}

TEST(PushIncarnationTest, RunsWithinOneMicrosecondDifferByTheirRandomBits) {
  const absl::Time now = absl::FromUnixSeconds(1795000000);
  EXPECT_NE(NewPushIncarnation(now, 1), NewPushIncarnation(now, 2));
}

TEST(PushIncarnationTest, NeverZero) {
  EXPECT_NE(NewPushIncarnation(absl::UnixEpoch(), 0), 0u);
  EXPECT_NE(NewPushIncarnation(absl::UnixEpoch() - absl::Hours(1), 0), 0u);
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
