#ifndef PSTRAIN_COMMON_DAEMON_SHUTDOWN_SIGNAL_H_
#define PSTRAIN_COMMON_DAEMON_SHUTDOWN_SIGNAL_H_

#include <atomic>

#include "absl/time/time.h"

namespace pstrain {

// SIGTERM and SIGINT turned into an ordinary wait, so a daemon shuts down
// from its main thread instead of from inside a signal handler.
//
// BlockShutdownSignals() must run first in main, before any thread starts:
// threads inherit the blocked mask, so the signals stay pending until
// ShutdownSignal::Wait() takes them. Thread-safe.
void BlockShutdownSignals();

class ShutdownSignal {
 public:
  // Returns the signal number (SIGTERM, SIGINT) that arrived, or 0 when
  // RequestShutdown() was called instead.
  int Wait();

  // Wakes Wait() from inside the process (a Shutdown RPC, a fatal error),
  // asking the process to exit with `exit_code` (exit_codes.h).
  void RequestShutdown(int exit_code = 0) {
    exit_code_.store(exit_code);
    requested_.store(true);
  }

  // What RequestShutdown asked for last; 0 before any.
  int requested_exit_code() const { return exit_code_.load(); }

 private:
  std::atomic<int> exit_code_{0};
  std::atomic<bool> requested_{false};
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DAEMON_SHUTDOWN_SIGNAL_H_
