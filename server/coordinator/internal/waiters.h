#ifndef PSTRAIN_SERVER_COORDINATOR_INTERNAL_WAITERS_H_
#define PSTRAIN_SERVER_COORDINATOR_INTERNAL_WAITERS_H_

#include <cstdint>
#include <functional>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace pstrain {
namespace coordinator {
namespace internal {

// Callbacks waiting for something to change, each called exactly once: by
// the next FireAll, or by Fire with its id. This is how a gRPC reactor
// waits without blocking a thread: it registers a callback and returns, and
// whoever changes the state fires it. Callbacks run on the thread that
// fires them, with no lock of this class held. Thread-safe.
//
// To wait without missing a change, register while holding the lock that
// guards the state the waiter checked, and fire after changing that state.
class Waiters {
 public:
  using Callback = std::function<void()>;

  Waiters() = default;
  Waiters(const Waiters&) = delete;
  Waiters& operator=(const Waiters&) = delete;

  // Registers `callback` and returns its id (> 0).
  uint64_t Add(Callback callback);

  // Calls every registered callback once and forgets them.
  void FireAll();

  // Calls callback `id` now if it has not been called yet; returns whether
  // it did.
  bool Fire(uint64_t id);

  int size() const;

 private:
  mutable absl::Mutex mu_;
  std::map<uint64_t, Callback> callbacks_ ABSL_GUARDED_BY(mu_);
  uint64_t last_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal
}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_INTERNAL_WAITERS_H_
