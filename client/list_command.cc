#include "client/list_command.h"

#include <iostream>

#include "client/exit_code.h"
#include "client/job_json.h"
#include "client/job_text.h"
#include "client/remote_command.h"

namespace pstrain {
namespace {

int RunList(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::cerr << "pstrain list: takes no arguments, got '" << args[0] << "'\n";
    return kExitUsage;
  }
  int exit_code = kExitSuccess;
  std::optional<RemoteCommand> remote = SetUpRemoteCommand("list", &exit_code);
  if (!remote) return exit_code;
  // 0: the coordinator's own limit (its newest 100).
  absl::StatusOr<ListJobsResponse> jobs = remote->client->List(0);
  if (!jobs.ok()) return ReportFailure("list", jobs.status());
  std::cout << (remote->output.format == OutputFormat::kJson ? JobListJson(*jobs) + "\n"
                                                             : FormatJobTable(*jobs));
  return kExitSuccess;
}

}  // namespace

Subcommand ListCommand() {
  return {"list",
          "",
          "list the jobs the coordinator knows, newest first",
          "One row per job: id, state, step, examples/s and the last evaluation, newest\n"
          "first (at most 100).\n"
          "\n"
          "Example:\n"
          "  pstrain list --output=json",
          RemoteCommandFlags({"output"}),
          RunList};
}

}  // namespace pstrain
