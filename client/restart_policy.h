#ifndef PSTRAIN_CLIENT_RESTART_POLICY_H_
#define PSTRAIN_CLIENT_RESTART_POLICY_H_

#include <deque>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/process/child_process.h"
#include "common/random/random_source.h"
#include "common/retry/backoff.h"

namespace pstrain {

// Whether a process of a local cluster that ends is started again, as a
// Kubernetes Pod's restartPolicy says.
enum class RestartMode {
  // A process that fails (a non-zero exit code, or killed by a signal) is
  // started again; one that exits 0 was told to (`pstrain shutdown`, a
  // SIGTERM) and is not.
  kOnFailure,
  // The first process that ends stops the cluster.
  kNever,
};

// "on-failure" or "never". InvalidArgument otherwise, naming both.
absl::StatusOr<RestartMode> ParseRestartMode(absl::string_view text);

struct RestartPolicyOptions {
  RestartMode mode = RestartMode::kOnFailure;
  // Restarts of one task allowed within `window`; its next failure stops the
  // cluster. Default 5 in 10 minutes: a process killed now and then heals for
  // ever, one that fails at every start (a bad flag, a full disk) gives up
  // within a minute instead of looping. 0: never restart.
  int max_restarts = 5;
  absl::Duration window = absl::Minutes(10);
  // The pauses between restarts of one task within `window`: the first
  // restart comes at once, the next after about 1 s, then 2, 4, ... up to
  // 30 s (kubelet's CrashLoopBackOff, 10 s to 5 min, scaled to processes
  // that start in a second). The jitter keeps tasks that failed together
  // from restarting together. deadline and log_every are not read.
  RetryOptions backoff = {absl::Seconds(1), absl::Seconds(30), 2.0, 0.5};
};

// A restart the policy allows.
struct PlannedRestart {
  // The task's restarts so far in this run, this one included (1 for its
  // first).
  int number = 0;
  // How long to wait before starting it again.
  absl::Duration pause;
};

// Decides, for each process of a local cluster that ended, whether it is
// started again and after what pause, keeping the count of each task's
// restarts. Not thread-safe.
class RestartPolicy {
 public:
  // `clock` and `random` are borrowed and must outlive the policy.
  RestartPolicy(RestartPolicyOptions options, Clock& clock, RandomSource& random);

  RestartPolicy(const RestartPolicy&) = delete;
  RestartPolicy& operator=(const RestartPolicy&) = delete;

  // Task `task` ("worker/1") ended with `exit`: its restart, counted, or
  // FailedPrecondition when it must not be started again, the message saying
  // why ("a clean exit is as told to ...", "it was restarted 5 times within
  // 10m, the most --max_restarts allows", "--restart=never").
  absl::StatusOr<PlannedRestart> OnExit(const std::string& task, const ExitStatus& exit);

  const RestartPolicyOptions& options() const { return options_; }

 private:
  struct TaskRestarts {
    TaskRestarts(const RetryOptions& options, RandomSource& random) : backoff(options, random) {}
    // When each restart within the window happened, oldest first.
    std::deque<absl::Time> recent;
    int total = 0;
    Backoff backoff;
  };

  const RestartPolicyOptions options_;
  Clock& clock_;
  RandomSource& random_;
  std::map<std::string, TaskRestarts> tasks_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_RESTART_POLICY_H_
