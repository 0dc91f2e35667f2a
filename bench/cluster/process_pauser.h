#ifndef PSTRAIN_BENCH_CLUSTER_PROCESS_PAUSER_H_
#define PSTRAIN_BENCH_CLUSTER_PROCESS_PAUSER_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace pstrain {
namespace bench {

// A slow process made of a fast one: stopped for a share of every period,
// running for the rest, as a straggler (a busy host, a throttled container)
// would be.
class PauseCycle {
 public:
  // InvalidArgument: period not > 0, or stopped_share not in [0, 1) (a
  // process stopped the whole time is a dead one, not a slow one).
  static absl::StatusOr<PauseCycle> Make(absl::Duration period, double stopped_share);

  absl::Duration period() const { return period_; }
  double stopped_share() const { return stopped_share_; }
  absl::Duration Stopped() const { return period_ * stopped_share_; }
  absl::Duration Running() const { return period_ - Stopped(); }
  // "stopped 200 ms of every 300 ms".
  std::string Describe() const;

 private:
  PauseCycle(absl::Duration period, double stopped_share)
      : period_(period), stopped_share_(stopped_share) {}

  absl::Duration period_;
  double stopped_share_;
};

// Cycles a process through SIGSTOP and SIGCONT on a thread of its own from
// Start() until Stop(), and always leaves it running: Stop() (and the
// destructor) end with a SIGCONT, also when a signal failed. Start() and
// Stop() are meant for one thread; the cycling thread only reads the
// schedule and records its errors under mu_.
class ProcessPauser {
 public:
  ProcessPauser(pid_t pid, const PauseCycle& cycle);
  ~ProcessPauser();

  ProcessPauser(const ProcessPauser&) = delete;
  ProcessPauser& operator=(const ProcessPauser&) = delete;

  // Starts the cycles, the first one stopping the process at once.
  // FailedPrecondition: already started.
  absl::Status Start();

  // Ends the cycles and sends SIGCONT. OK, or the first signal that failed
  // (Internal, naming the pid and errno: the process may have ended). A
  // pauser never started, or already stopped, returns OK.
  absl::Status Stop();

  // Complete stop-and-continue cycles so far.
  int64_t cycles() const;

 private:
  void Cycle();
  // Sends `signal`, keeping the first failure in error_.
  void Signal(int signal) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const pid_t pid_;
  const PauseCycle cycle_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t cycles_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status error_ ABSL_GUARDED_BY(mu_);

  // Owned by the thread that calls Start() and Stop().
  std::thread thread_;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_PROCESS_PAUSER_H_
