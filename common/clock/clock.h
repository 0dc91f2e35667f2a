#ifndef PSTRAIN_COMMON_CLOCK_CLOCK_H_
#define PSTRAIN_COMMON_CLOCK_CLOCK_H_

// Time as pstrain processes see it. Everything that waits for a deadline
// or measures an age reads time through a Clock, so tests can use FakeClock
// and never sleep to reach a deadline.

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace pstrain {

// A source of time and of deadline-bounded waits. Implementations are
// thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;

  virtual absl::Time Now() = 0;

  // With `mu` held, waits until `cond` holds or Now() >= deadline, and
  // returns whether `cond` holds. `mu` is held again on return. Pass
  // absl::InfiniteFuture() to wait without a deadline.
  virtual bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                                 absl::Time deadline) = 0;
};

// The system clock.
class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) override {
    return mu->AwaitWithDeadline(cond, deadline);
  }
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLOCK_CLOCK_H_
