#ifndef PSTRAIN_COMMON_CLOCK_STOP_SIGNAL_H_
#define PSTRAIN_COMMON_CLOCK_STOP_SIGNAL_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace pstrain {

// A one-way flag that interrupts waits: set once, seen by every waiter, now
// and later. A process's retry pauses, heartbeat intervals and backoffs wait
// on one, so that stopping the process ends them at once. Thread-safe.
class StopSignal {
 public:
  StopSignal() = default;
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  void Stop() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }

  bool stopped() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return stopped_;
  }

  // Waits until Stop() or `deadline` on `clock`; returns whether stopped.
  bool WaitUntil(Clock& clock, absl::Time deadline) const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return clock.AwaitWithDeadline(&mu_, absl::Condition(&stopped_), deadline);
  }

  // Waits `duration` on `clock` or until Stop(); returns whether stopped.
  bool SleepFor(Clock& clock, absl::Duration duration) const ABSL_LOCKS_EXCLUDED(mu_) {
    return WaitUntil(clock, clock.Now() + duration);
  }

 private:
  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLOCK_STOP_SIGNAL_H_
