#ifndef PSTRAIN_COMMON_CLOCK_FAKE_CLOCK_H_
#define PSTRAIN_COMMON_CLOCK_FAKE_CLOCK_H_

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace pstrain {

// A Clock for tests that moves only when told to (Advance), or, once told to
// JumpToDeadlines, whenever a wait would otherwise block until a deadline.
// Thread-safe. A mutex that a waiter blocks on must outlive every Advance()
// that may wake it.
class FakeClock : public Clock {
 public:
  // Starts at a fixed, arbitrary time so that tests print stable times.
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000));

  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  absl::Time Now() override;

  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) override;

  // Moves time forward by `d` (>= 0) and wakes every waiter so it re-checks
  // its deadline.
  void Advance(absl::Duration d);

  // From now on a wait with a finite deadline whose condition does not hold
  // moves time to that deadline and returns at once, as though the wait had
  // lasted: retry pauses and heartbeat intervals take no real time, and
  // slept() says how long they would have taken. Waits without a deadline
  // still block until their condition holds.
  void JumpToDeadlines();

  // The time that waits have jumped over (JumpToDeadlines).
  absl::Duration slept();

  // Threads blocked in AwaitWithDeadline, so a test can wait for a waiter to
  // start before it advances time.
  int NumWaiters();

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  bool jump_to_deadlines_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration slept_ ABSL_GUARDED_BY(mu_);
  // The mutexes waiters block on; the same mutex once per waiter.
  std::vector<absl::Mutex*> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLOCK_FAKE_CLOCK_H_
