#include "client/shutdown_command.h"

#include <iostream>

#include "client/exit_code.h"
#include "client/remote_command.h"
#include "gflags/gflags.h"

DEFINE_bool(stop_job, false,
            "shutdown: stop the running job first (after its final checkpoint) instead of "
            "refusing to shut down while it runs");

namespace pstrain {
namespace {

int RunShutdown(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::cerr << "pstrain shutdown: takes no arguments, got '" << args[0] << "'\n";
    return kExitUsage;
  }
  int exit_code = kExitSuccess;
  std::optional<RemoteCommand> remote = SetUpRemoteCommand("shutdown", &exit_code);
  if (!remote) return exit_code;
  absl::Status shut = remote->client->Shutdown(FLAGS_stop_job);
  if (shut.code() == absl::StatusCode::kFailedPrecondition) {
    std::cerr << "pstrain shutdown: " << shut.message()
              << "; pass --stop_job to stop it first (it keeps its final checkpoint)\n";
    return kExitWrongState;
  }
  if (!shut.ok()) return ReportFailure("shutdown", shut);
  std::cout << "the cluster at " << remote->client->address() << " is shutting down\n";
  return kExitSuccess;
}

}  // namespace

Subcommand ShutdownCommand() {
  return {"shutdown",
          "",
          "shut the whole cluster down: every member exits, then the coordinator",
          "Tells the coordinator to shut the cluster down: parameter servers, workers and\n"
          "the evaluator exit, then the coordinator. Refused while a job runs unless\n"
          "--stop_job (the job then saves its final checkpoint first): exit code 7.\n"
          "\n"
          "Example:\n"
          "  pstrain shutdown --stop_job",
          RemoteCommandFlags({"stop_job"}),
          RunShutdown};
}

}  // namespace pstrain
