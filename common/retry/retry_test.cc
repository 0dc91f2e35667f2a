#include "common/retry/retry.h"

#include "common/clock/fake_clock.h"
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

}  // namespace
}  // namespace pstrain
