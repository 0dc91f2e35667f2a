#ifndef PSTRAIN_EVALUATOR_FAKE_CLOCK_H_
#define PSTRAIN_EVALUATOR_FAKE_CLOCK_H_

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "evaluator/clock.h"

namespace pstrain {
namespace evaluator {

// A Clock for tests that moves only when told to. Thread-safe. A mutex that
// a waiter blocks on must outlive every Advance() that may wake it.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000));

  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  absl::Time Now() override;
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) override;

  // Moves time forward by `d` (>= 0) and wakes every waiter so it re-checks
  // its deadline.
  void Advance(absl::Duration d);

  // Threads blocked in AwaitWithDeadline.
  int NumWaiters();

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Mutex*> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_FAKE_CLOCK_H_
