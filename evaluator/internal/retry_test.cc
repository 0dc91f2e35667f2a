#include "evaluator/internal/retry.h"

#include <algorithm>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace evaluator {
namespace internal {
namespace {

// A clock whose waits end at once, moving time to their deadline: each
// retry pause takes no real time and exactly its nominal length.
class JumpingClock final : public Clock {
 public:
  absl::Time Now() override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) override {
    if (cond.Eval()) return true;
    absl::MutexLock lock(&mu_);
    now_ = std::max(now_, deadline);
    return false;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ = absl::FromUnixSeconds(1700000000);
};

TEST(RetryTest, RetriesUnavailableOnly) {
  JumpingClock clock;
  StopSignal stop;
  int calls = 0;
  absl::Status status = RetryOnUnavailable("x", RetryOptions(), clock, stop, [&] {
    return ++calls < 3 ? absl::UnavailableError("down") : absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(calls, 3);

  calls = 0;
  status = RetryOnUnavailable("x", RetryOptions(), clock, stop, [&] {
    ++calls;
    return absl::AbortedError("stale incarnation");
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(calls, 1);
}

TEST(RetryTest, GivesUpAtTheDeadlineAndWhenStopped) {
  JumpingClock clock;
  StopSignal stop;
  const absl::Time start = clock.Now();
  RetryOptions options;
  options.deadline = absl::Seconds(20);
  absl::StatusOr<int> result = RetryOnUnavailable<int>(
      "the coordinator (Register)", options, clock, stop,
      [] { return absl::StatusOr<int>(absl::UnavailableError("connection refused")); });
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(result.status().message().find("connection refused"), absl::string_view::npos);
  // 0.1 + 0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 5 + 5 s of pauses, then the next
  // would end past 20 s.
  EXPECT_EQ(clock.Now() - start, absl::Milliseconds(16300));

  stop.Stop();
  absl::Status status = RetryOnUnavailable("x", RetryOptions(), clock, stop,
                                           [] { return absl::UnavailableError("down"); });
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace internal
}  // namespace evaluator
}  // namespace pstrain
