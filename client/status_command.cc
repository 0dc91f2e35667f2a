#include "client/status_command.h"

#include <iostream>

#include "client/exit_code.h"
#include "client/job_json.h"
#include "client/job_text.h"
#include "client/remote_command.h"

namespace pstrain {
namespace {

// Without a job id: the running job, else the newest. Empty when the
// coordinator has none.
absl::StatusOr<std::string> DefaultJobId(JobServiceClient& client) {
  absl::StatusOr<ClusterStatus> cluster = client.GetCluster();
  if (!cluster.ok()) return cluster.status();
  if (!cluster->running_job_id().empty()) return cluster->running_job_id();
  absl::StatusOr<ListJobsResponse> newest = client.List(1);
  if (!newest.ok()) return newest.status();
  return newest->jobs().empty() ? "" : newest->jobs(0).job_id();
}

int RunStatus(const std::vector<std::string>& args) {
  if (args.size() > 1) {
    std::cerr << "pstrain status: expected at most one job id, got " << args.size()
              << " arguments (see pstrain status --help)\n";
    return kExitUsage;
  }
  int exit_code = kExitSuccess;
  std::optional<RemoteCommand> remote = SetUpRemoteCommand("status", &exit_code);
  if (!remote) return exit_code;
  std::string job_id;
  if (args.empty()) {
    absl::StatusOr<std::string> id = DefaultJobId(*remote->client);
    if (!id.ok()) return ReportFailure("status", id.status());
    if (id->empty()) {
      if (remote->output.format == OutputFormat::kJson) {
        std::cout << "{}\n";
      } else {
        std::cout << "no jobs on the coordinator at " << remote->client->address() << "\n";
      }
      return kExitSuccess;
    }
    job_id = *id;
  } else {
    job_id = args[0];
  }
  absl::StatusOr<JobStatus> status = remote->client->Get(job_id);
  if (!status.ok()) return ReportFailure("status", status.status());
  if (remote->output.format == OutputFormat::kJson) {
    std::cout << JobStatusJson(*status) << "\n";
  } else {
    std::cout << FormatJobStatus(*status, absl::Now());
  }
  return ExitCodeForJobState(status->state());
}

}  // namespace

Subcommand StatusCommand() {
  return {"status",
          "[JOB]",
          "show a job's state, step, throughput and last evaluation",
          "Shows one job: state, step, examples/s, training loss, the last evaluation,\n"
          "checkpoints and export. Without JOB: the running job, else the newest one.\n"
          "Exit code 0 for a queued, running or succeeded job, 1 for a failed or stopped\n"
          "one, 2 for an unknown job id, 3 when the coordinator cannot be reached.\n"
          "\n"
          "Examples:\n"
          "  pstrain status\n"
          "  pstrain status fashion-mnist-mlp-1 --output=json",
          RemoteCommandFlags({"output"}),
          RunStatus};
}

}  // namespace pstrain
