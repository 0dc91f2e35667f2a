#include "common/daemon/shutdown_signal.h"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <ctime>

namespace pstrain {
namespace {

sigset_t ShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

void BlockShutdownSignals() {
  sigset_t set = ShutdownSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int ShutdownSignal::Wait() {
  const sigset_t set = ShutdownSignals();
  // Polls the in-process request between waits; 100 ms is far below any
  // shutdown deadline and costs nothing measurable.
  const timespec slice{0, 100 * 1000 * 1000};
  while (!requested_.load()) {
    int signal = sigtimedwait(&set, nullptr, &slice);
    if (signal > 0) return signal;
  }
  return 0;
}

}  // namespace pstrain
