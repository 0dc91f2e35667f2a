#include "client/cluster_command.h"

#include <iostream>

#include "client/exit_code.h"
#include "client/job_json.h"
#include "client/job_text.h"
#include "client/remote_command.h"

namespace pstrain {
namespace {

int RunCluster(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::cerr << "pstrain cluster: takes no arguments, got '" << args[0] << "'\n";
    return kExitUsage;
  }
  int exit_code = kExitSuccess;
  std::optional<RemoteCommand> remote = SetUpRemoteCommand("cluster", &exit_code);
  if (!remote) return exit_code;
  absl::StatusOr<ClusterStatus> cluster = remote->client->GetCluster();
  if (!cluster.ok()) return ReportFailure("cluster", cluster.status());
  std::cout << (remote->output.format == OutputFormat::kJson
                    ? ClusterJson(*cluster, absl::Now()) + "\n"
                    : FormatClusterTable(*cluster, absl::Now()));
  return kExitSuccess;
}

}  // namespace

Subcommand ClusterCommand() {
  return {"cluster",
          "",
          "show the cluster's members: role, address, state, heartbeat, step, queue",
          "One row per member the coordinator knows: role/index, address, incarnation\n"
          "(a new one means the process restarted), state (IDLE, BUSY, LOST, LEFT), age\n"
          "of its last heartbeat, the step it last saw, its queue depth and its health;\n"
          "then the running job and the number of queued jobs.\n"
          "\n"
          "Example:\n"
          "  pstrain cluster --coordinator_address=localhost:7070",
          RemoteCommandFlags({"output"}),
          RunCluster};
}

}  // namespace pstrain
