#include "client/stop_command.h"

#include <iostream>

#include "client/enum_names.h"
#include "client/exit_code.h"
#include "client/job_json.h"
#include "client/remote_command.h"
#include "gflags/gflags.h"

DEFINE_bool(immediately, false,
            "stop: skip the final checkpoint and evaluation (default: save them first)");

namespace pstrain {
namespace {

int RunStop(const std::vector<std::string>& args) {
  std::optional<std::string> job_id = OneJobIdArgument("stop", args);
  if (!job_id) return kExitUsage;
  int exit_code = kExitSuccess;
  std::optional<RemoteCommand> remote = SetUpRemoteCommand("stop", &exit_code);
  if (!remote) return exit_code;
  absl::StatusOr<JobStatus> status = remote->client->Stop(*job_id, FLAGS_immediately);
  if (!status.ok()) return ReportFailure("stop", status.status());
  if (remote->output.format == OutputFormat::kJson) {
    std::cout << JobStatusJson(*status) << "\n";
  } else if (status->state() == JOB_STATE_SUCCEEDED || status->state() == JOB_STATE_FAILED ||
             status->state() == JOB_STATE_STOPPED) {
    std::cout << "job " << *job_id << " had already ended: " << JobStateName(status->state())
              << "\n";
  } else {
    std::cout << "stopping job " << *job_id << " ("
              << (FLAGS_immediately ? "without a final checkpoint"
                                    : "after a final checkpoint and evaluation")
              << "); `pstrain watch " << *job_id << "` follows it to its end\n";
  }
  return kExitSuccess;
}

}  // namespace

Subcommand StopCommand() {
  return {"stop",
          "JOB",
          "stop a queued or running job (after a final checkpoint)",
          "Asks the coordinator to stop the job. A running job saves a final checkpoint\n"
          "and is evaluated first, unless --immediately; it then ends STOPPED. Returns\n"
          "once the stop is accepted (exit code 0); a job already ended is left as it is.\n"
          "\n"
          "Example:\n"
          "  pstrain stop fashion-mnist-mlp-1",
          RemoteCommandFlags({"output", "immediately"}),
          RunStop};
}

}  // namespace pstrain
