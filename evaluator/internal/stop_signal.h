#ifndef PSTRAIN_EVALUATOR_INTERNAL_STOP_SIGNAL_H_
#define PSTRAIN_EVALUATOR_INTERNAL_STOP_SIGNAL_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace pstrain {
namespace evaluator {
namespace internal {

// A one-way flag that interrupts waits: set once, seen by every waiter.
// Thread-safe.
class StopSignal {
 public:
  StopSignal() = default;
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  void Stop() {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }

  bool stopped() {
    absl::MutexLock lock(&mu_);
    return stopped_;
  }

  // Waits until Stop() or `deadline` on `clock`; returns whether stopped.
  bool WaitUntil(Clock& clock, absl::Time deadline) {
    absl::MutexLock lock(&mu_);
    return clock.AwaitWithDeadline(&mu_, absl::Condition(&stopped_), deadline);
  }

 private:
  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace internal
}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_INTERNAL_STOP_SIGNAL_H_
