#ifndef PSTRAIN_SERVER_PS_FAKE_CLOCK_H_
#define PSTRAIN_SERVER_PS_FAKE_CLOCK_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/ps/clock.h"

namespace pstrain {

// A Clock that moves only when told to. Thread-safe. A mutex that a waiter
// blocks on must outlive every Advance() that may wake it.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1000000))
      : now_ns_(absl::ToUnixNanos(start)) {}

  absl::Time Now() override { return absl::FromUnixNanos(now_ns_.load()); }

  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                         absl::Time deadline) override {
    {
      absl::MutexLock l(&waiters_mu_);
      waiters_.push_back(mu);
    }
    const int64_t deadline_ns =
        deadline == absl::InfiniteFuture() ? INT64_MAX : absl::ToUnixNanos(deadline);
    struct Args {
      const absl::Condition* cond;
      const std::atomic<int64_t>* now_ns;
      int64_t deadline_ns;
    } args{&cond, &now_ns_, deadline_ns};
    mu->Await(absl::Condition(
        +[](Args* a) { return a->cond->Eval() || a->now_ns->load() >= a->deadline_ns; }, &args));
    {
      absl::MutexLock l(&waiters_mu_);
      for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
        if (*it == mu) {
          waiters_.erase(it);
          break;
        }
      }
    }
    return cond.Eval();
  }

  // Moves time forward and wakes every waiter so it re-checks its deadline.
  void Advance(absl::Duration d) {
    now_ns_.fetch_add(absl::ToInt64Nanoseconds(d));
    std::vector<absl::Mutex*> waiters;
    {
      absl::MutexLock l(&waiters_mu_);
      waiters = waiters_;
    }
    // Releasing a mutex makes absl re-evaluate the conditions waited on it.
    for (absl::Mutex* mu : waiters) {
      mu->Lock();
      mu->Unlock();
    }
  }

  // The number of threads blocked in AwaitWithDeadline, so a test can wait
  // until a waiter has started before advancing time.
  int NumWaiters() {
    absl::MutexLock l(&waiters_mu_);
    return static_cast<int>(waiters_.size());
  }

 private:
  std::atomic<int64_t> now_ns_;
  absl::Mutex waiters_mu_;
  std::vector<absl::Mutex*> waiters_ ABSL_GUARDED_BY(waiters_mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_FAKE_CLOCK_H_
