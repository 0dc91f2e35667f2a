#include "worker/retry.h"

#include "gtest/gtest.h"
#include "worker/testing/fake_clock.h"

namespace pstrain {
namespace worker {
namespace {

TEST(BackoffTest, GrowsToTheCapWithJitterBelowTheNominalPause) {
  RetryOptions options;
  options.initial_backoff = absl::Milliseconds(100);
  options.max_backoff = absl::Milliseconds(400);
  options.jitter = 0.5;
  SeededRandom random(3);
  Backoff backoff(options, random);
  const absl::Duration nominal[] = {absl::Milliseconds(100), absl::Milliseconds(200),
                                    absl::Milliseconds(400), absl::Milliseconds(400)};
  for (absl::Duration n : nominal) {
    const absl::Duration pause = backoff.Next();
    EXPECT_LE(pause, n);
    EXPECT_GE(pause, n / 2);
  }
}

TEST(RetryTest, RetriesOnlyUnavailable) {
  FakeClock clock;
  SeededRandom random(1);
  int calls = 0;
  absl::Status status = RetryOnUnavailable("peer", RetryOptions(), clock, random, nullptr, [&] {
    return ++calls < 3 ? absl::UnavailableError("down") : absl::OkStatus();
  });
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(calls, 3);
  EXPECT_GT(clock.slept(), absl::ZeroDuration());

  calls = 0;
  status = RetryOnUnavailable("peer", RetryOptions(), clock, random, nullptr, [&] {
    ++calls;
    return absl::AbortedError("restart");
  });
  EXPECT_TRUE(absl::IsAborted(status));
  EXPECT_EQ(calls, 1);
}

TEST(RetryTest, GivesUpAtTheDeadlineNamingThePeer) {
  FakeClock clock;
  SeededRandom random(1);
  RetryOptions options;
  options.deadline = absl::Seconds(30);
  absl::Status status = RetryOnUnavailable("ps/1 (pull)", options, clock, random, nullptr,
                                           [] { return absl::UnavailableError("refused"); });
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_NE(status.message().find("ps/1 (pull)"), absl::string_view::npos);
  EXPECT_NE(status.message().find("refused"), absl::string_view::npos);
  EXPECT_LE(clock.slept(), absl::Seconds(30));
  EXPECT_GE(clock.slept(), absl::Seconds(20));
}

TEST(RetryTest, StopEndsTheWait) {
  FakeClock clock;
  SeededRandom random(1);
  absl::Notification stop;
  stop.Notify();
  absl::Status status = RetryOnUnavailable("peer", RetryOptions(), clock, random, &stop,
                                           [] { return absl::UnavailableError("down"); });
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
}

TEST(RetryTest, ReturnsTheValueOfTheSuccessfulAttempt) {
  FakeClock clock;
  SeededRandom random(1);
  int calls = 0;
  absl::StatusOr<int> value = RetryOnUnavailable<int>("peer", RetryOptions(), clock, random,
                                                      nullptr, [&]() -> absl::StatusOr<int> {
                                                        if (++calls == 1)
                                                          return absl::UnavailableError("down");
                                                        return 42;
                                                      });
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, 42);
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
