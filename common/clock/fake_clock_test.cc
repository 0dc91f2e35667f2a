#include "common/clock/fake_clock.h"

#include <thread>

#include "common/clock/stop_signal.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(FakeClockTest, MovesOnlyWhenAdvanced) {
  FakeClock clock(absl::FromUnixSeconds(100));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(100));
  clock.Advance(absl::Seconds(2));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(102));
}

TEST(FakeClockTest, AwaitReturnsAtOnceWhenTheConditionHolds) {
  FakeClock clock;
  absl::Mutex mu;
  bool ready = true;
  absl::MutexLock lock(&mu);
  EXPECT_TRUE(clock.AwaitWithDeadline(&mu, absl::Condition(&ready), absl::InfiniteFuture()));
}

TEST(FakeClockTest, AwaitReturnsAtOncePastTheDeadline) {
  FakeClock clock;
  absl::Mutex mu;
  bool ready = false;
  absl::MutexLock lock(&mu);
  EXPECT_FALSE(clock.AwaitWithDeadline(&mu, absl::Condition(&ready), clock.Now()));
}

TEST(FakeClockTest, AdvancePastTheDeadlineWakesAWaiter) {
  FakeClock clock;
  absl::Mutex mu;
  bool ready = false;
  bool result = true;
  const absl::Time deadline = clock.Now() + absl::Seconds(5);
  std::thread waiter([&] {
    absl::MutexLock lock(&mu);
    result = clock.AwaitWithDeadline(&mu, absl::Condition(&ready), deadline);
  });
  {
    // Wait, without sleeping, until the waiter blocks.
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](FakeClock* c) { return c->NumWaiters() == 1; }, &clock));
  }
  clock.Advance(absl::Seconds(6));
  waiter.join();
  EXPECT_FALSE(result);
  EXPECT_EQ(clock.NumWaiters(), 0);
}

TEST(FakeClockTest, JumpingToDeadlinesEndsWaitsAtOnceAndCountsTheirLength) {
  FakeClock clock(absl::FromUnixSeconds(100));
  clock.JumpToDeadlines();
  absl::Mutex mu;
  bool ready = false;
  absl::MutexLock lock(&mu);
  EXPECT_FALSE(clock.AwaitWithDeadline(&mu, absl::Condition(&ready),
                                       absl::FromUnixSeconds(103)));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(103));
  // A deadline already past moves nothing.
  EXPECT_FALSE(clock.AwaitWithDeadline(&mu, absl::Condition(&ready),
                                       absl::FromUnixSeconds(101)));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(103));
  EXPECT_EQ(clock.slept(), absl::Seconds(3));
  ready = true;
  EXPECT_TRUE(clock.AwaitWithDeadline(&mu, absl::Condition(&ready),
                                      absl::FromUnixSeconds(200)));
  EXPECT_EQ(clock.slept(), absl::Seconds(3));
}

TEST(FakeClockTest, StopSignalSleepsOnTheClock) {
  FakeClock clock;
  clock.JumpToDeadlines();
  StopSignal stop;
  const absl::Time start = clock.Now();
  EXPECT_FALSE(stop.SleepFor(clock, absl::Seconds(2)));
  EXPECT_EQ(clock.Now(), start + absl::Seconds(2));
  stop.Stop();
  EXPECT_TRUE(stop.stopped());
  EXPECT_TRUE(stop.SleepFor(clock, absl::Hours(1)));
  EXPECT_EQ(clock.Now(), start + absl::Seconds(2));
}

}  // namespace
}  // namespace pstrain
