#include "common/process/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace pstrain {
namespace {

ExitStatus FromWaitStatus(int status) {
  ExitStatus result;
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace

std::string ExitStatus::ToString() const {
  if (signal != 0) return absl::StrCat("killed by signal ", signal, " (", strsignal(signal), ")");
  return absl::StrCat("exit code ", exit_code);
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const ChildProcessOptions& options) {
  if (::access(options.program.c_str(), X_OK) != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot run ", options.program, ": ", std::strerror(errno)));
  }
  // Everything exec needs is built before fork: the child may only call
  // async-signal-safe functions.
  std::vector<std::string> argv_storage = {options.program};
  argv_storage.insert(argv_storage.end(), options.args.begin(), options.args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** entry = environ; *entry != nullptr; ++entry) env_storage.emplace_back(*entry);
  env_storage.insert(env_storage.end(), options.env.begin(), options.env.end());
  std::vector<char*> envp;
  for (std::string& entry : env_storage) envp.push_back(entry.data());
  envp.push_back(nullptr);

  int log_fd = -1;
  if (!options.log_path.empty()) {
    log_fd = ::open(options.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      return absl::InternalError(
          absl::StrCat("cannot open log ", options.log_path, ": ", std::strerror(errno)));
    }
  }

  const pid_t pid = ::fork();
  if (pid < 0) {
    if (log_fd >= 0) ::close(log_fd);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    // The parent may block SIGTERM/SIGINT to wait for them; the child must
    // get them delivered normally.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (log_fd >= 0) {
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  if (log_fd >= 0) ::close(log_fd);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid));
}

ChildProcess::~ChildProcess() {
  if (!exit_status_.has_value()) Stop(absl::Seconds(2));
}

void ChildProcess::Signal(int signal) {
  if (!exit_status_.has_value()) ::kill(pid_, signal);
}

std::optional<ExitStatus> ChildProcess::Poll() {
  if (exit_status_.has_value()) return exit_status_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) exit_status_ = FromWaitStatus(status);
  return exit_status_;
}

absl::StatusOr<ExitStatus> ChildProcess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  // waitpid has no timeout; a short poll keeps this free of SIGCHLD
  // handlers, which would collide with the caller's own.
  absl::Duration pause = absl::Milliseconds(1);
  while (!Poll().has_value()) {
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("process ", pid_, " still running after ", absl::FormatDuration(timeout)));
    }
    absl::SleepFor(pause);
    pause = std::min(pause * 2, absl::Milliseconds(50));
  }
  return *exit_status_;
}

ExitStatus ChildProcess::Stop(absl::Duration grace) {
  Signal(SIGTERM);
  absl::StatusOr<ExitStatus> status = Wait(grace);
  if (status.ok()) return *status;
  Signal(SIGKILL);
  int raw = 0;
  ::waitpid(pid_, &raw, 0);
  exit_status_ = FromWaitStatus(raw);
  return *exit_status_;
}

}  // namespace pstrain
