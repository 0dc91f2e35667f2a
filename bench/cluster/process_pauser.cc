#include "bench/cluster/process_pauser.h"

#include <signal.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pstrain {
namespace bench {

absl::StatusOr<PauseCycle> PauseCycle::Make(absl::Duration period, double stopped_share) {
  if (period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the pause period must be > 0, got ", absl::FormatDuration(period)));
  }
  if (!(stopped_share >= 0 && stopped_share < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the stopped share of a pause period must be in [0, 1), got ", stopped_share));
  }
  return PauseCycle(period, stopped_share);
}

std::string PauseCycle::Describe() const {
  return absl::StrFormat("stopped %.0f ms of every %.0f ms", absl::ToDoubleMilliseconds(Stopped()),
                         absl::ToDoubleMilliseconds(period_));
}

ProcessPauser::ProcessPauser(pid_t pid, const PauseCycle& cycle) : pid_(pid), cycle_(cycle) {}

ProcessPauser::~ProcessPauser() { Stop().IgnoreError(); }

absl::Status ProcessPauser::Start() {
  if (thread_.joinable()) return absl::FailedPreconditionError("the pauser already runs");
  {
    absl::MutexLock lock(&mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Cycle(); });
  return absl::OkStatus();
}

absl::Status ProcessPauser::Stop() {
  if (!thread_.joinable()) return absl::OkStatus();
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
  absl::MutexLock lock(&mu_);
  Signal(SIGCONT);
  return error_;
}

int64_t ProcessPauser::cycles() const {
  absl::MutexLock lock(&mu_);
  return cycles_;
}

void ProcessPauser::Cycle() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    Signal(SIGSTOP);
    // Waits on the flag, not a sleep: Stop() ends a stopped phase at once.
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), cycle_.Stopped())) break;
    Signal(SIGCONT);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), cycle_.Running())) break;
    ++cycles_;
  }
  Signal(SIGCONT);
}

void ProcessPauser::Signal(int signal) {
  if (::kill(pid_, signal) == 0 || !error_.ok()) return;
  error_ = absl::InternalError(absl::StrCat("cannot send ", signal == SIGSTOP ? "SIGSTOP" : "SIGCONT",
                                            " to process ", pid_, ": ", std::strerror(errno)));
}

}  // namespace bench
}  // namespace pstrain
