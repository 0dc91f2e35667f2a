#include "common/clock/fake_clock.h"

#include <algorithm>

#include "glog/logging.h"

namespace pstrain {

FakeClock::FakeClock(absl::Time start) : now_(start) {}

absl::Time FakeClock::Now() {
  absl::MutexLock lock(&mu_);
  return now_;
}

bool FakeClock::AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond,
                                  absl::Time deadline) {
  if (cond.Eval()) return true;
  {
    absl::MutexLock lock(&mu_);
    if (jump_to_deadlines_ && deadline != absl::InfiniteFuture()) {
      // Other waiters are not woken: in this mode they never block on a
      // deadline, and the caller holds `mu`, which one of them may wait on.
      if (deadline > now_) {
        slept_ += deadline - now_;
        now_ = deadline;
      }
      return false;
    }
    waiters_.push_back(mu);
  }
  struct Args {
    FakeClock* clock;
    const absl::Condition* cond;
    absl::Time deadline;
  } args{this, &cond, deadline};
  // Evaluated with `mu` held; reading the time takes mu_, which is never held
  // while `mu` is acquired (Advance releases mu_ before it touches waiters),
  // so the lock order is always mu -> mu_.
  mu->Await(absl::Condition(
      +[](Args* a) { return a->cond->Eval() || a->clock->Now() >= a->deadline; }, &args));
  {
    absl::MutexLock lock(&mu_);
    auto it = std::find(waiters_.begin(), waiters_.end(), mu);
    if (it != waiters_.end()) waiters_.erase(it);
  }
  return cond.Eval();
}

void FakeClock::Advance(absl::Duration d) {
  CHECK(d >= absl::ZeroDuration()) << "a FakeClock only moves forward";
  std::vector<absl::Mutex*> waiters;
  {
    absl::MutexLock lock(&mu_);
    now_ += d;
    waiters = waiters_;
  }
  // Releasing a mutex makes Abseil re-evaluate the conditions waited on it.
  for (absl::Mutex* mu : waiters) {
    mu->Lock();
    mu->Unlock();
  }
}

void FakeClock::JumpToDeadlines() {
  absl::MutexLock lock(&mu_);
  jump_to_deadlines_ = true;
}

absl::Duration FakeClock::slept() {
  absl::MutexLock lock(&mu_);
  return slept_;
}

int FakeClock::NumWaiters() {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(waiters_.size());
}

}  // namespace pstrain
