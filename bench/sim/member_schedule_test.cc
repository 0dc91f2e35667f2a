#include "bench/sim/member_schedule.h"

#include <map>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000);

TEST(SpreadOffsetTest, SpreadsMembersEvenlyOverThePeriod) {
  EXPECT_EQ(SpreadOffset(0, 4, absl::Seconds(2)), absl::ZeroDuration());
  EXPECT_EQ(SpreadOffset(1, 4, absl::Seconds(2)), absl::Milliseconds(500));
  EXPECT_EQ(SpreadOffset(3, 4, absl::Seconds(2)), absl::Milliseconds(1500));
  EXPECT_EQ(SpreadOffset(0, 1, absl::Seconds(2)), absl::ZeroDuration());
  EXPECT_EQ(SpreadOffset(5, 10, absl::ZeroDuration()), absl::ZeroDuration());
}

TEST(MemberScheduleTest, NothingIsDueBeforeItsTime) {
  MemberSchedule schedule;
  EXPECT_EQ(schedule.NextDue(), absl::InfiniteFuture());
  EXPECT_FALSE(schedule.PopDue(kStart).has_value());
  schedule.Add(7, MemberEvent::kHeartbeat, kStart + absl::Seconds(1), absl::Seconds(2));
  EXPECT_EQ(schedule.NextDue(), kStart + absl::Seconds(1));
  EXPECT_FALSE(schedule.PopDue(kStart).has_value());
  std::optional<DueEvent> event = schedule.PopDue(kStart + absl::Seconds(1));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->member, 7);
  EXPECT_EQ(event->kind, MemberEvent::kHeartbeat);
  EXPECT_EQ(event->due, kStart + absl::Seconds(1));
  // Re-armed a period after it was due.
  EXPECT_EQ(schedule.NextDue(), kStart + absl::Seconds(3));
  EXPECT_EQ(schedule.size(), 1u);
}

TEST(MemberScheduleTest, EveryMemberBeatsOncePerPeriodInDueOrder) {
  MemberSchedule schedule;
  const int members = 50;
  const absl::Duration period = absl::Seconds(2);
  for (int m = 0; m < members; ++m) {
    schedule.Add(m, MemberEvent::kHeartbeat, kStart + SpreadOffset(m, members, period), period);
    schedule.Add(m, MemberEvent::kStep, kStart + SpreadOffset(m, members, absl::Seconds(1)),
                 absl::Seconds(1));
  }
  // Step through 10 s in 10 ms ticks, as a driver would.
  std::map<int, int> beats;
  std::map<int, int> steps;
  absl::Time last_due = absl::InfinitePast();
  for (absl::Time now = kStart; now < kStart + absl::Seconds(10); now += absl::Milliseconds(10)) {
    while (std::optional<DueEvent> event = schedule.PopDue(now)) {
      EXPECT_GE(event->due, last_due);
      last_due = event->due;
      (event->kind == MemberEvent::kHeartbeat ? beats : steps)[event->member]++;
    }
  }
  ASSERT_EQ(beats.size(), static_cast<size_t>(members));
  for (const auto& [member, count] : beats) EXPECT_EQ(count, 5) << "member " << member;
  for (const auto& [member, count] : steps) EXPECT_EQ(count, 10) << "member " << member;
  EXPECT_EQ(schedule.skipped(), 0);
}

TEST(MemberScheduleTest, ALateDriverSkipsMissedBeatsInsteadOfBursting) {
  MemberSchedule schedule;
  schedule.Add(0, MemberEvent::kHeartbeat, kStart, absl::Seconds(1));
  // The driver wakes 3.5 s late: one beat fires, those at 1, 2 and 3 s
  // are skipped, and the next is at 4 s.
  std::optional<DueEvent> event = schedule.PopDue(kStart + absl::Milliseconds(3500));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->due, kStart);
  EXPECT_FALSE(schedule.PopDue(kStart + absl::Milliseconds(3500)).has_value());
  EXPECT_EQ(schedule.skipped(), 3);
  EXPECT_EQ(schedule.NextDue(), kStart + absl::Seconds(4));
}

TEST(MemberScheduleTest, TiesGoInTheOrderAdded) {
  MemberSchedule schedule;
  for (int m : {3, 1, 2}) schedule.Add(m, MemberEvent::kStep, kStart, absl::Seconds(1));
  std::vector<int> order;
  while (std::optional<DueEvent> event = schedule.PopDue(kStart)) order.push_back(event->member);
  EXPECT_EQ(order, (std::vector<int>{3, 1, 2}));
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
