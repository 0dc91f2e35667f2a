#ifndef PSTRAIN_SERVER_PS_VERSION_GATE_H_
#define PSTRAIN_SERVER_PS_VERSION_GATE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace pstrain {

// A shard's published version (updates whose apply has finished) and the
// reads waiting for it to reach a value, each with a deadline. Waits are
// callbacks so that no server thread blocks on a slow sync round; one
// internal thread fires deadlines, reading time from the injected Clock.
// Thread-safe. Callbacks run without the gate's lock held, on the thread
// that advanced the version, the deadline thread, or the caller.
class VersionGate {
 public:
  using Callback = std::function<void(absl::StatusOr<int64_t>)>;

  VersionGate(Clock& clock, int64_t version);
  // Shutdown(Cancelled) if not shut down yet, then joins the thread.
  ~VersionGate();

  VersionGate(const VersionGate&) = delete;
  VersionGate& operator=(const VersionGate&) = delete;

  int64_t version() const;
  // Sets the version (it may go down, on restore) and runs every waiter it
  // satisfies.
  void Set(int64_t version);
  void Increment(int64_t by = 1);

  // Runs done(version) once version() >= min_version (at once, on this
  // thread, if it already is), done(DeadlineExceeded) once the clock passes
  // `deadline`, or done(status) on Shutdown. Returns an id for Cancel.
  uint64_t WhenAtLeast(int64_t min_version, absl::Time deadline, Callback done);

  // Runs the waiter's callback with Cancelled if it has not run yet.
  void Cancel(uint64_t id);

  // Blocks until version() >= min_version; DeadlineExceeded past
  // `deadline`; the shutdown status after Shutdown.
  absl::StatusOr<int64_t> WaitAtLeast(int64_t min_version, absl::Time deadline);

  // Fails every waiter, and every later wait, with `status` (not OK).
  void Shutdown(absl::Status status);

 private:
  struct Waiter {
    int64_t min_version;
    absl::Time deadline;
    Callback done;
  };

  void DeadlineLoop();
  // Removes and returns the callbacks of satisfied waiters.
  std::vector<Callback> TakeSatisfied() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;

  mutable absl::Mutex mu_;
  int64_t version_ ABSL_GUARDED_BY(mu_);
  absl::Status shutdown_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // Bumped whenever the earliest deadline may have changed.
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;

  std::thread deadline_thread_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_VERSION_GATE_H_
