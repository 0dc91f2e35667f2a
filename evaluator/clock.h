#ifndef PSTRAIN_EVALUATOR_CLOCK_H_
#define PSTRAIN_EVALUATOR_CLOCK_H_

// Time as the evaluator sees it. start_delay_secs, throttle_secs, retry
// backoff, model_dir polling and "waiting for" messages all read time
// through a Clock, so tests drive them with FakeClock
// (evaluator/fake_clock.h) and never sleep to reach a deadline.

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace pstrain {
namespace evaluator {

// A source of time and of deadline-bounded waits. Implementations are
// thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;

  virtual absl::Time Now() = 0;

  // With `mu` held, waits until `cond` holds or Now() >= deadline, and
  // returns whether `cond` holds. `mu` is held again on return.
  virtual bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                                 absl::Time deadline) = 0;
};

// The system clock. Thread-safe.
class RealClock final : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }

  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) override {
    return mu->AwaitWithDeadline(cond, deadline);
  }
};

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_CLOCK_H_
