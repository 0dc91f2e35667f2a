#ifndef PSTRAIN_COMMON_CLOCK_INTERVAL_GATE_H_
#define PSTRAIN_COMMON_CLOCK_INTERVAL_GATE_H_

#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace pstrain {

// Opens at most once per interval of a clock's time: for the log lines a
// long-running process writes now and then about where it is (a job's
// progress every 10 s, which `kubectl logs` shows), rather than on every
// event. Not thread-safe.
class IntervalGate {
 public:
  // `clock` is borrowed and must outlive the gate.
  IntervalGate(Clock& clock, absl::Duration interval) : clock_(clock), interval_(interval) {}

  // True the first time, then once `interval` has passed since it was last
  // true.
  bool Open() {
    const absl::Time now = clock_.Now();
    if (now < next_) return false;
    next_ = now + interval_;
    return true;
  }

 private:
  Clock& clock_;
  const absl::Duration interval_;
  absl::Time next_ = absl::InfinitePast();
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLOCK_INTERVAL_GATE_H_
