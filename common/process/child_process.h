#ifndef PSTRAIN_COMMON_PROCESS_CHILD_PROCESS_H_
#define PSTRAIN_COMMON_PROCESS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pstrain {

struct ChildProcessOptions {
  // Path of the program and its arguments (without argv[0]).
  std::string program;
  std::vector<std::string> args;
  // Extra environment, "NAME=value", on top of this process's.
  std::vector<std::string> env;
  // Where stdout and stderr go (appended). Empty: inherit ours.
  std::string log_path;
};

// How a child ended: an exit code or the signal that killed it.
struct ExitStatus {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool ok() const { return exit_code == 0; }
  std::string ToString() const;  // "exit code 0", "killed by signal 9"
};

// A process started by pstrain (the local cluster launcher, end-to-end
// tests). The destructor kills a child that is still running, so no process
// outlives a crashed launcher's scope. Not thread-safe.
class ChildProcess {
 public:
  // NotFound: the program does not exist or is not executable.
  // Internal: fork/exec failed.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const ChildProcessOptions& options);

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // Sends `signal` (e.g. SIGTERM) unless the child has already been reaped.
  void Signal(int signal);

  // The exit status if the child has ended, without blocking.
  std::optional<ExitStatus> Poll();

  // Waits up to `timeout` for the child to end. DeadlineExceeded if it is
  // still running then (it keeps running).
  absl::StatusOr<ExitStatus> Wait(absl::Duration timeout);

  // SIGTERM, wait up to `grace`, then SIGKILL. Returns how it ended.
  ExitStatus Stop(absl::Duration grace);

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}

  const pid_t pid_;
  std::optional<ExitStatus> exit_status_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_PROCESS_CHILD_PROCESS_H_
