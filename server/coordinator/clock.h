#ifndef PSTRAIN_SERVER_COORDINATOR_CLOCK_H_
#define PSTRAIN_SERVER_COORDINATOR_CLOCK_H_

// Time as the coordinator sees it. Heartbeat deadlines, lease deadlines, the
// checkpoint schedule, max_seconds and wait logging all read time through a
// Clock, so tests drive them with FakeClock and never sleep to reach a
// deadline.

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace pstrain {
namespace coordinator {

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

// The system clock. Thread-safe.
class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }

  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) override {
    return mu->AwaitWithDeadline(cond, deadline);
  }
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_CLOCK_H_
