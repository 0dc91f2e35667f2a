#include "server/ps/version_gate.h"

#include <thread>

#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"
#include "server/ps/test_signal.h"

namespace pstrain {
namespace {

TEST(VersionGateTest, ReachedVersionAnswersAtOnce) {
  FakeClock clock;
  VersionGate gate(clock, 3);
  absl::StatusOr<int64_t> got;
  gate.WhenAtLeast(2, clock.Now() + absl::Seconds(1), [&](absl::StatusOr<int64_t> v) { got = v; });
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 3);
}

TEST(VersionGateTest, WaiterRunsWhenTheVersionArrives) {
  FakeClock clock;
  VersionGate gate(clock, 0);
  absl::StatusOr<int64_t> got = absl::UnknownError("not run");
  gate.WhenAtLeast(2, clock.Now() + absl::Seconds(10), [&](absl::StatusOr<int64_t> v) { got = v; });
  gate.Increment();
  EXPECT_FALSE(got.ok());
  gate.Increment();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 2);
}

TEST(VersionGateTest, DeadlineEndsTheWaitWithDeadlineExceeded) {
  FakeClock clock;
  VersionGate gate(clock, 0);
  TestSignal done;
  absl::Status status;
  gate.WhenAtLeast(1, clock.Now() + absl::Seconds(5), [&](absl::StatusOr<int64_t> v) {
    status = v.status();
    done.Notify();
  });
  clock.Advance(absl::Seconds(4));
  EXPECT_FALSE(done.HasBeenNotified());
  clock.Advance(absl::Seconds(2));
  done.Wait();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(status.message().find("version 1"), std::string::npos) << status;
}

TEST(VersionGateTest, PastDeadlineFailsAtOnce) {
  FakeClock clock;
  VersionGate gate(clock, 0);
  absl::Status status;
  gate.WhenAtLeast(1, clock.Now(), [&](absl::StatusOr<int64_t> v) { status = v.status(); });
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(VersionGateTest, CancelAndShutdownEndWaiters) {
  FakeClock clock;
  VersionGate gate(clock, 0);
  absl::Status a, b;
  const uint64_t id = gate.WhenAtLeast(5, absl::InfiniteFuture(),
                                       [&](absl::StatusOr<int64_t> v) { a = v.status(); });
  gate.WhenAtLeast(5, absl::InfiniteFuture(), [&](absl::StatusOr<int64_t> v) { b = v.status(); });
  gate.Cancel(id);
  EXPECT_EQ(a.code(), absl::StatusCode::kCancelled);
  gate.Shutdown(absl::FailedPreconditionError("dropped"));
  EXPECT_EQ(b.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(gate.WaitAtLeast(1, absl::InfiniteFuture()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(VersionGateTest, BlockingWaitReturnsOnIncrementOrDeadline) {
  FakeClock clock;
  VersionGate gate(clock, 0);
  std::thread pusher([&] { gate.Increment(); });
  EXPECT_EQ(*gate.WaitAtLeast(1, absl::InfiniteFuture()), 1);
  pusher.join();
  absl::StatusOr<int64_t> late;
  // The deadline is fixed before the waiter starts, so advancing past it
  // ends the wait whether or not the waiter has started blocking.
  const absl::Time deadline = clock.Now() + absl::Seconds(1);
  std::thread waiter([&] { late = gate.WaitAtLeast(2, deadline); });
  clock.Advance(absl::Seconds(2));
  waiter.join();
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace pstrain
