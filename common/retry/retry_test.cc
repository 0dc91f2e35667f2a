#include "common/retry/retry.h"

#include "common/clock/fake_clock.h"
#include "common/status/error_reason.h"
#include "gtest/gtest.h"

namespace pstrain {
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
  backoff.Reset();
  EXPECT_LE(backoff.Next(), absl::Milliseconds(100));
}

TEST(BackoffTest, WithoutJitterPausesAreTheNominalOnes) {
  RetryOptions options;
  options.initial_backoff = absl::Milliseconds(100);
  options.max_backoff = absl::Milliseconds(300);
  options.jitter = 0;
  SeededRandom random(3);
  Backoff backoff(options, random);
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(100));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(200));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(300));
}

class RetryTest : public ::testing::Test {
 protected:
  RetryTest() { clock_.JumpToDeadlines(); }

  FakeClock clock_;
  SeededRandom random_{1};
  StopSignal stop_;
  RetryContext context_{clock_, random_, stop_};
};

TEST_F(RetryTest, RetriesOnlyUnavailable) {
  int calls = 0;
  absl::Status status = RetryOnUnavailable("peer", RetryOptions(), context_, [&] {
    return ++calls < 3 ? absl::UnavailableError("down") : absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(calls, 3);
  EXPECT_GT(clock_.slept(), absl::ZeroDuration());

  calls = 0;
  status = RetryOnUnavailable("peer", RetryOptions(), context_, [&] {
    ++calls;
    return absl::AbortedError("stale incarnation");
  });
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_EQ(calls, 1);
}

TEST_F(RetryTest, GivesUpAtTheDeadlineNamingThePeerAndTheLastError) {
  RetryOptions options;
  options.deadline = absl::Seconds(20);
  options.initial_backoff = absl::Milliseconds(100);
  options.jitter = 0;
  const absl::Time start = clock_.Now();
  absl::Status status = RetryOnUnavailable("ps/1 (pull)", options, context_,
                                           [] { return absl::UnavailableError("refused"); });
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_NE(status.message().find("ps/1 (pull)"), absl::string_view::npos);
  EXPECT_NE(status.message().find("refused"), absl::string_view::npos);
  // 0.1 + 0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 5 + 5 s of pauses; the next would
  // end past 20 s.
  EXPECT_EQ(clock_.Now() - start, absl::Milliseconds(16300));
}

TEST_F(RetryTest, RetriesOnlyWhatThePredicateAccepts) {
  int calls = 0;
  // An Unavailable that is an answer (here: any whose message says "later")
  // is returned at once; others are retried.
  auto retryable = [](const absl::Status& status) {
    return absl::IsUnavailable(status) && status.message() != "ask later";
  };
  absl::Status status = Retry("peer", RetryOptions(), context_, retryable, [&] {
    return ++calls < 3 ? absl::UnavailableError("down") : absl::UnavailableError("ask later");
  });
  EXPECT_EQ(status.message(), "ask later");
  EXPECT_EQ(calls, 3);
}

TEST_F(RetryTest, CanGiveUpWithTheLastUnavailable) {
  RetryOptions options;
  options.deadline = absl::Seconds(1);
  options.give_up_as_deadline_exceeded = false;
  absl::Status status = RetryOnUnavailable("ps/0", options, context_,
                                           [] { return absl::UnavailableError("refused"); });
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_NE(status.message().find("attempts"), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find("refused"), absl::string_view::npos) << status;
}

TEST_F(RetryTest, StopEndsTheWait) {
  stop_.Stop();
  int calls = 0;
  absl::Status status = RetryOnUnavailable("peer", RetryOptions(), context_, [&] {
    ++calls;
    return absl::UnavailableError("down");
  });
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(clock_.slept(), absl::ZeroDuration());
}

TEST_F(RetryTest, UntilStoppedOutlastsTheDeadline) {
  RetryOptions options;
  options.deadline = absl::Seconds(1);
  options.max_backoff = absl::Seconds(5);
  int calls = 0;
  absl::Status status = RetryUntilStopped(
      "coordinator (register)", options, context_, RetryableUnavailable(),
      [&] { return ++calls < 40 ? absl::UnavailableError("down") : absl::OkStatus(); });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(calls, 40);
  // Far past the deadline of 1 s: only success, a refusal or stop end it.
  EXPECT_GT(clock_.slept(), absl::Minutes(1));
}

TEST_F(RetryTest, UntilStoppedEndsWithTheFirstRefusedStatusOrTheStop) {
  int calls = 0;
  absl::Status status =
      RetryUntilStopped("peer", RetryOptions(), context_, RetryableUnavailable(), [&] {
        return ++calls < 3 ? absl::UnavailableError("down") : absl::InvalidArgumentError("no");
      });
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_EQ(calls, 3);

  // Stopped from within an attempt, as another thread would: the pause
  // after it does not start.
  calls = 0;
  status = RetryUntilStopped("peer", RetryOptions(), context_, RetryableUnavailable(), [&] {
    if (++calls == 5) stop_.Stop();
    return absl::UnavailableError("down");
  });
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_EQ(calls, 5);
}

TEST_F(RetryTest, RepeatUntilStoppedGoesOnAfterSuccessAndPausesOnlyAfterFailures) {
  RetryOptions options;
  options.initial_backoff = absl::Milliseconds(100);
  options.jitter = 0;
  options.deadline = absl::Milliseconds(1);  // not read
  std::vector<absl::Duration> slept_before;
  int calls = 0;
  absl::Status status = RepeatUntilStopped(
      "assignments", options, context_, RetryableUnavailable(), [&]() -> absl::Status {
        slept_before.push_back(clock_.slept());
        switch (++calls) {
          case 1:
          case 2:
            return absl::UnavailableError("down");  // pauses 100 ms, then 200 ms
          case 3:
            return absl::OkStatus();  // no pause; the pauses start over
          case 4:
            return absl::UnavailableError("down");  // 100 ms again
          case 5:
            return absl::OkStatus();
          default:
            return absl::FailedPreconditionError("replaced");
        }
      });
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  const std::vector<absl::Duration> expected = {absl::ZeroDuration(),    absl::Milliseconds(100),
                                                absl::Milliseconds(300), absl::Milliseconds(300),
                                                absl::Milliseconds(400), absl::Milliseconds(400)};
  EXPECT_EQ(slept_before, expected);
}

TEST_F(RetryTest, RepeatUntilStoppedEndsWhenStoppedAfterASuccess) {
  int calls = 0;
  absl::Status status =
      RepeatUntilStopped("assignments", RetryOptions(), context_, RetryableUnavailable(), [&] {
        if (++calls == 3) stop_.Stop();
        return absl::OkStatus();
      });
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_EQ(calls, 3);
}

TEST_F(RetryTest, ReasonsDecideWhatIsRetried) {
  const absl::Status no_lease =
      WithReason(absl::UnavailableError("every range is out"), ERROR_REASON_NO_FREE_LEASE);
  const absl::Status unreachable = absl::UnavailableError("connection refused");
  const absl::Status ended =
      WithReason(absl::FailedPreconditionError("job ended"), ERROR_REASON_JOB_ENDED);

  RetryablePredicate transport = RetryableUnavailable({ERROR_REASON_NO_FREE_LEASE});
  EXPECT_TRUE(transport(unreachable));
  EXPECT_FALSE(transport(no_lease));  // an answer for the caller
  EXPECT_FALSE(transport(ended));

  RetryablePredicate waits = RetryableReasons({ERROR_REASON_NO_FREE_LEASE});
  EXPECT_TRUE(waits(no_lease));
  EXPECT_FALSE(waits(unreachable));
  EXPECT_FALSE(waits(ended));
  EXPECT_FALSE(waits(absl::OkStatus()));

  int calls = 0;
  absl::Status status = RetryUntilStopped("data lease", RetryOptions(), context_, waits,
                                          [&] { return ++calls < 4 ? no_lease : ended; });
  EXPECT_EQ(ReasonOf(status), ERROR_REASON_JOB_ENDED);
  EXPECT_EQ(calls, 4);
}

TEST_F(RetryTest, RepeatEveryTicksAtItsIntervalUntilTheTickSaysEnough) {
  std::vector<absl::Duration> ticks;
  const absl::Time start = clock_.Now();
  RepeatEvery(
      context_, [] { return absl::Seconds(2); },
      [&] {
        ticks.push_back(clock_.Now() - start);
        return ticks.size() < 3;
      });
  const std::vector<absl::Duration> expected = {absl::ZeroDuration(), absl::Seconds(2),
                                                absl::Seconds(4)};
  EXPECT_EQ(ticks, expected);

  // Stopped during a tick: no pause, no further tick.
  int more = 0;
  RepeatEvery(
      context_, [] { return absl::Seconds(2); },
      [&] {
        ++more;
        stop_.Stop();
        return true;
      });
  EXPECT_EQ(more, 1);
}

}  // namespace
}  // namespace pstrain
