#include "client/restart_policy.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace pstrain {

absl::StatusOr<RestartMode> ParseRestartMode(absl::string_view text) {
  if (text == "on-failure") return RestartMode::kOnFailure;
  if (text == "never") return RestartMode::kNever;
  return absl::InvalidArgumentError(
      absl::StrCat("--restart must be on-failure or never, got '", text, "'"));
}

RestartPolicy::RestartPolicy(RestartPolicyOptions options, Clock& clock, RandomSource& random)
    : options_(std::move(options)), clock_(clock), random_(random) {}

absl::StatusOr<PlannedRestart> RestartPolicy::OnExit(const std::string& task,
                                                     const ExitStatus& exit) {
  if (options_.mode == RestartMode::kNever) {
    return absl::FailedPreconditionError("it is not restarted (--restart=never)");
  }
  if (exit.ok()) {
    return absl::FailedPreconditionError(
        "a clean exit is as told to (pstrain shutdown, a SIGTERM): only a failure is restarted");
  }
  TaskRestarts& restarts = tasks_.try_emplace(task, options_.backoff, random_).first->second;
  const absl::Time now = clock_.Now();
  while (!restarts.recent.empty() && now - restarts.recent.front() >= options_.window) {
    restarts.recent.pop_front();
  }
  if (static_cast<int>(restarts.recent.size()) >= options_.max_restarts) {
    return absl::FailedPreconditionError(
        absl::StrCat("it was restarted ", restarts.recent.size(),
                     restarts.recent.size() == 1 ? " time" : " times", " within ",
                     absl::FormatDuration(options_.window),
                     ", the most --max_restarts=", options_.max_restarts, " allows"));
  }
  PlannedRestart restart;
  if (restarts.recent.empty()) {
    // It ran a whole window without failing: a fresh start, as kubelet
    // resets its backoff.
    restarts.backoff.Reset();
  } else {
    restart.pause = restarts.backoff.Next();
  }
  restarts.recent.push_back(now);
  restart.number = ++restarts.total;
  return restart;
}

}  // namespace pstrain
