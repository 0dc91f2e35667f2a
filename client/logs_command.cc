#include "client/logs_command.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/coordinator_address.h"
#include "client/enum_names.h"
#include "client/exit_code.h"
#include "client/job_service_client.h"
#include "client/remote_command.h"
#include "client/scale_inbox.h"
#include "client/task_log_reader.h"
#include "client/task_logs.h"
#include "common/checkpoint/posix_env.h"
#include "common/daemon/ready_file.h"
#include "common/net/security_flags.h"
#include "gflags/gflags.h"

// Defined in local_command.cc: where `pstrain local` keeps its logs.
DECLARE_string(run_dir);

DEFINE_string(task, "",
              "logs: only this task's lines: coordinator, ps/N, worker/N or evaluator; default "
              "every task's, each line after its task's name");
DEFINE_bool(follow, false,
            "logs: go on printing the job's lines as they are logged until the job ends (a "
            "queued job's from its start)");

namespace pstrain {
namespace {

// How often --follow looks for new lines and asks whether the job ended.
constexpr absl::Duration kFollowPoll = absl::Milliseconds(300);

// When the job ran: every line logged in between is the job's, since a
// cluster runs one job at a time.
struct JobWindow {
  absl::Time start;
  absl::Time end;  // exclusive; absl::InfiniteFuture() while the job runs

  bool Contains(absl::Time time) const { return time >= start && time < end; }
};

// nullopt while the job is queued (it has not started).
std::optional<JobWindow> WindowOf(const JobStatus& job) {
  if (job.start_unix_ms() == 0) return std::nullopt;
  JobWindow window{absl::FromUnixMillis(job.start_unix_ms()), absl::InfiniteFuture()};
  // The end is in whole milliseconds; a line of its last millisecond is in.
  if (job.end_unix_ms() != 0) window.end = absl::FromUnixMillis(job.end_unix_ms() + 1);
  return window;
}

bool HasEnded(const JobStatus& job) { return job.end_unix_ms() != 0; }

// The run folder: --run_dir, else that of the one `pstrain local` that runs.
absl::StatusOr<std::string> RunFolder() {
  if (!FLAGS_run_dir.empty()) return FLAGS_run_dir;
  absl::StatusOr<std::string> running = FindRunningLocalCluster();
  if (absl::IsFailedPrecondition(running.status())) {
    return absl::InvalidArgumentError(running.status().message());
  }
  if (absl::IsNotFound(running.status())) {
    return absl::UnavailableError(absl::StrCat(
        running.status().message(),
        "; for a cluster that has stopped pass its run folder, --run_dir=DIR (`pstrain local` "
        "prints it at start; <model_dir>/logs by default). On Kubernetes each task logs to its "
        "pod: kubectl logs -l app.kubernetes.io/part-of=pstrain --prefix"));
  }
  return running;
}

// --coordinator_address or $PSTRAIN_COORDINATOR when given; otherwise the
// address the run folder's coordinator wrote in its ready file, which is
// right even when `pstrain local` found its default port taken.
absl::StatusOr<std::string> CoordinatorOf(const std::string& run_dir) {
  absl::StatusOr<CoordinatorAddress> address = CoordinatorAddressFromFlags();
  if (!address.ok()) return address.status();
  if (!address->is_default()) return address->host_port;
  absl::StatusOr<ReadyInfo> ready =
      WaitForReadyFile(run_dir + "/coordinator-0.ready", absl::ZeroDuration());
  if (ready.ok() && !(*ready)["grpc"].empty()) return (*ready)["grpc"];
  return address->host_port;
}

// The job's status; NotFound naming the jobs the coordinator knows.
absl::StatusOr<JobStatus> GetJob(JobServiceClient& client, const std::string& job_id) {
  absl::StatusOr<JobStatus> job = client.Get(job_id);
  if (!absl::IsNotFound(job.status())) return job;
  absl::StatusOr<ListJobsResponse> known = client.List(100);
  if (!known.ok()) return job;
  if (known->jobs().empty()) {
    return absl::NotFoundError(absl::StrCat("no job ", job_id, "; the coordinator at ",
                                            client.address(), " knows no jobs"));
  }
  return absl::NotFoundError(absl::StrCat(
      "no job ", job_id, "; the coordinator at ", client.address(), " knows ",
      absl::StrJoin(known->jobs(), ", ", [](std::string* out, const JobStatus& status) {
        absl::StrAppend(out, status.job_id(), " (", JobStateName(status.state()), ")");
      })));
}

// Each task's log as it grows. Not thread-safe.
class TaskLogs {
 public:
  TaskLogs(std::string run_dir, std::string task)
      : run_dir_(std::move(run_dir)), task_(std::move(task)) {}

  // Finds the tasks there are now (a worker added by `pstrain scale` comes
  // in). NotFound: no such task, naming those there are.
  absl::Status Refresh() {
    absl::StatusOr<std::vector<TaskLogFile>> listed = ListTaskLogs(env_, run_dir_);
    if (!listed.ok()) return listed.status();
    absl::StatusOr<std::vector<TaskLogFile>> selected = SelectTaskLogs(*listed, task_);
    if (!selected.ok()) return selected.status();
    for (const TaskLogFile& log : *selected) {
      if (readers_.count(log.task) > 0) continue;
      order_.push_back(log.task);
      readers_.emplace(log.task,
                       std::make_unique<TaskLogReader>(env_, log.path, absl::LocalTimeZone()));
    }
    return absl::OkStatus();
  }

  // The lines in `window` every task logged since the last call, in time
  // order, each after its task's name when there are several tasks.
  absl::StatusOr<std::vector<std::string>> NewLines(const JobWindow& window) {
    struct Timed {
      absl::Time time;
      std::string text;
    };
    std::vector<Timed> lines;
    for (const std::string& task : order_) {
      absl::StatusOr<std::vector<LogLine>> read = readers_.at(task)->ReadNewLines();
      if (!read.ok()) return read.status();
      for (LogLine& line : *read) {
        if (!window.Contains(line.time)) continue;
        lines.push_back({line.time, task_.empty() ? absl::StrCat("[", task, "] ", line.text)
                                                  : std::move(line.text)});
      }
    }
    // Stable: a task's lines keep their order, and lines of one instant
    // keep the tasks' order.
    std::stable_sort(lines.begin(), lines.end(),
                     [](const Timed& a, const Timed& b) { return a.time < b.time; });
    std::vector<std::string> texts;
    for (Timed& line : lines) texts.push_back(std::move(line.text));
    return texts;
  }

 private:
  PosixEnv env_;
  const std::string run_dir_;
  const std::string task_;  // empty: every task
  std::vector<std::string> order_;
  std::map<std::string, std::unique_ptr<TaskLogReader>> readers_;
};

absl::Status Print(TaskLogs& logs, const JobWindow& window) {
  absl::StatusOr<std::vector<std::string>> lines = logs.NewLines(window);
  if (!lines.ok()) return lines.status();
  for (const std::string& line : *lines) std::cout << line << "\n";
  std::cout << std::flush;
  return absl::OkStatus();
}

// Prints the job's lines as they come until it ends.
absl::Status Follow(JobServiceClient& client, const std::string& job_id, TaskLogs& logs) {
  while (true) {
    absl::StatusOr<JobStatus> job = client.Get(job_id);
    if (!job.ok()) return job.status();
    if (std::optional<JobWindow> window = WindowOf(*job)) {
      if (absl::Status found = logs.Refresh(); !found.ok()) return found;
      // The job's status was read before its lines: a line logged up to
      // its end is in the files by now.
      if (absl::Status printed = Print(logs, *window); !printed.ok()) return printed;
    }
    if (HasEnded(*job)) return absl::OkStatus();
    absl::SleepFor(kFollowPoll);
  }
}

int RunLogs(const std::vector<std::string>& args) {
  std::optional<std::string> job_id = OneJobIdArgument("logs", args);
  if (!job_id) return kExitUsage;
  absl::StatusOr<std::string> run_dir = RunFolder();
  if (!run_dir.ok()) return ReportFailure("logs", run_dir.status());
  TaskLogs logs(*run_dir, FLAGS_task);
  if (absl::Status found = logs.Refresh(); !found.ok()) {
    std::cerr << "pstrain logs: " << found.message() << " (run folder " << *run_dir << ")\n";
    return absl::IsNotFound(found) ? kExitUsage : kExitJobFailed;
  }
  absl::StatusOr<std::string> coordinator = CoordinatorOf(*run_dir);
  absl::StatusOr<ChannelSecurity> security = ClientChannelSecurityFromFlags();
  for (const absl::Status& status : {coordinator.status(), security.status()}) {
    if (!status.ok()) {
      std::cerr << "pstrain logs: " << status.message() << "\n";
      return kExitUsage;
    }
  }
  JobServiceClient client(*coordinator, absl::Seconds(30), *security);
  absl::StatusOr<JobStatus> job = GetJob(client, *job_id);
  if (!job.ok()) return ReportFailure("logs", job.status());
  if (FLAGS_follow) {
    absl::Status followed = Follow(client, *job_id, logs);
    return followed.ok() ? kExitSuccess : ReportFailure("logs", followed);
  }
  std::optional<JobWindow> window = WindowOf(*job);
  if (!window.has_value()) {
    std::cerr << "pstrain logs: job " << *job_id << " is " << JobStateName(job->state())
              << " and has not started; nothing is logged for it yet (--follow waits)\n";
    return kExitSuccess;
  }
  absl::Status printed = Print(logs, *window);
  return printed.ok() ? kExitSuccess : ReportFailure("logs", printed);
}

}  // namespace

Subcommand LogsCommand() {
  return {"logs",
          "JOB",
          "show the log lines of a job's processes on a local cluster",
          "Prints the lines the processes of a `pstrain local` cluster (coordinator/0,\n"
          "ps/N, worker/N, evaluator/0) logged while job JOB ran, merged in time order,\n"
          "each after its task's name: [worker/1] I20261207 10:00:01.000123 ...\n"
          "--task=worker/0 shows one task's lines, without the name. --follow goes on\n"
          "printing them as they are logged and returns when the job ends.\n"
          "\n"
          "The lines come from the logs `pstrain local` keeps in its run folder, one file\n"
          "per task (<run_dir>/<role>-<index>.log); a job's are those logged from its\n"
          "start to its end as the coordinator reports them, since a cluster runs one job\n"
          "at a time. The run folder is --run_dir, else that of the one `pstrain local` of\n"
          "this user that runs; the coordinator is --coordinator_address if given, else\n"
          "the run folder's. On Kubernetes each task logs to its pod: kubectl logs.\n"
          "\n"
          "Exit codes: 0 the lines were printed (with --follow: the job ended), 2 bad\n"
          "usage, an unknown job or task (the message names those there are), 3 no\n"
          "`pstrain local` runs here (pass --run_dir) or its coordinator cannot be reached.\n"
          "\n"
          "Examples:\n"
          "  pstrain logs fashion-mnist-mlp-1\n"
          "  pstrain logs fashion-mnist-mlp-1 --task=worker/0 --follow\n"
          "  pstrain logs my-job-1 --run_dir=$HOME/pstrain/my-job/logs",
          RemoteCommandFlags({"run_dir", "task", "follow"}),
          RunLogs};
}

}  // namespace pstrain
