#include "client/task_supervisor.h"

#include "absl/strings/str_cat.h"
#include "client/worker_scaler.h"

namespace pstrain {
namespace {

// How often the cluster's processes are checked: a dead one is noticed
// within this, at the cost of a waitpid per process.
constexpr absl::Duration kProcessCheckInterval = absl::Milliseconds(250);

std::string FirstLine(absl::string_view text) {
  return std::string(text.substr(0, text.find('\n')));
}

}  // namespace

std::optional<GivenUpTask> SuperviseTasks(LocalCluster& cluster, RestartPolicy& policy,
                                          Clock& clock, const StopSignal& stop,
                                          const std::function<void(const std::string&)>& announce,
                                          ScaleInbox* inbox) {
  while (!stop.SleepFor(clock, kProcessCheckInterval)) {
    if (inbox != nullptr) AnswerScaleRequests(cluster, *inbox, announce);
    std::optional<TaskExit> exit = cluster.FirstExitedTask();
    if (!exit.has_value()) continue;
    const LocalTask& task = exit->task;
    absl::StatusOr<PlannedRestart> restart = policy.OnExit(task.name(), exit->exit);
    if (!restart.ok())
      return GivenUpTask{*std::move(exit), std::string(restart.status().message())};
    std::string when = "now";
    if (restart->pause > absl::ZeroDuration()) {
      when = absl::StrCat(
          "in ", absl::FormatDuration(absl::Trunc(restart->pause, absl::Milliseconds(100))));
    }
    announce(absl::StrCat(task.name(), " (pid ", task.pid, ") exited with ", exit->exit.ToString(),
                          "; restarting it ", when, " (restart ", restart->number,
                          "; log: ", task.log_path, ")"));
    if (stop.SleepFor(clock, restart->pause)) return std::nullopt;
    // A restart that fails leaves the task ended (or not serving): the next
    // check sees it again, and the policy bounds how often.
    if (absl::Status restarted = cluster.RestartTask(task.name()); !restarted.ok()) {
      announce(absl::StrCat(task.name(), " did not come back: ", FirstLine(restarted.message())));
      continue;
    }
    for (const LocalTask& now : cluster.tasks()) {
      if (now.name() != task.name()) continue;
      announce(absl::StrCat(now.name(), " restarted (pid ", now.pid, ") at ", now.grpc_address));
    }
  }
  return std::nullopt;
}

}  // namespace pstrain
