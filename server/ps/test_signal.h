#ifndef PSTRAIN_SERVER_PS_TEST_SIGNAL_H_
#define PSTRAIN_SERVER_PS_TEST_SIGNAL_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace pstrain {

// A one-shot event for tests: one thread Notify()s, others Wait(). Unlike
// absl::Notification, its whole synchronisation goes through absl::Mutex
// calls made from this header, which ThreadSanitizer can see (see
// common/testing/tsan_absl_mutex.cc). Thread-safe.
class TestSignal {
 public:
  void Notify() {
    absl::MutexLock l(&mu_);
    done_ = true;
  }
  void Wait() {
    absl::MutexLock l(&mu_);
    mu_.Await(absl::Condition(&done_));
  }
  bool HasBeenNotified() {
    absl::MutexLock l(&mu_);
    return done_;
  }

 private:
  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_TEST_SIGNAL_H_
