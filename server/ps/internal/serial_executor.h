#ifndef PSTRAIN_SERVER_PS_INTERNAL_SERIAL_EXECUTOR_H_
#define PSTRAIN_SERVER_PS_INTERNAL_SERIAL_EXECUTOR_H_

#include <deque>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace pstrain {
namespace internal {

// Runs closures one at a time, in order, on its own thread: slow calls
// (creating variables, writing and reading snapshot files) run here instead
// of on gRPC's callback threads. Thread-safe. The destructor runs what is
// queued, then joins.
class SerialExecutor {
 public:
  SerialExecutor() : thread_([this] { Loop(); }) {}
  ~SerialExecutor() {
    {
      absl::MutexLock l(&mu_);
      stop_ = true;
    }
    thread_.join();
  }
  SerialExecutor(const SerialExecutor&) = delete;
  SerialExecutor& operator=(const SerialExecutor&) = delete;

  void Schedule(std::function<void()> fn) {
    absl::MutexLock l(&mu_);
    queue_.push_back(std::move(fn));
  }

 private:
  void Loop() {
    for (;;) {
      std::function<void()> fn;
      {
        absl::MutexLock l(&mu_);
        mu_.Await(absl::Condition(
            +[](SerialExecutor* e)
                 ABSL_NO_THREAD_SAFETY_ANALYSIS { return e->stop_ || !e->queue_.empty(); },
            this));
        if (queue_.empty()) return;
        fn = std::move(queue_.front());
        queue_.pop_front();
      }
      fn();
    }
  }

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace internal
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_INTERNAL_SERIAL_EXECUTOR_H_
