#ifndef PSTRAIN_WORKER_CLOCK_H_
#define PSTRAIN_WORKER_CLOCK_H_

// Time as the worker sees it. Backoff between retries, the "waiting for ...
// since" messages and throughput read time through a Clock, so tests drive
// retries with a fake one and never sleep through a backoff.

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace pstrain {
namespace worker {

// A source of time and of interruptible sleeps. Implementations are
// thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;

  virtual absl::Time Now() = 0;

  // Sleeps for `duration` or until `*stop` (may be null) is notified,
  // whichever comes first. Returns true if `*stop` is notified.
  virtual bool SleepFor(absl::Duration duration, const absl::Notification* stop) = 0;
};

// The system clock. Thread-safe.
class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }

  bool SleepFor(absl::Duration duration, const absl::Notification* stop) override {
    if (stop == nullptr) {
      absl::SleepFor(duration);
      return false;
    }
    return stop->WaitForNotificationWithTimeout(duration);
  }
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_CLOCK_H_
