#ifndef PSTRAIN_CLIENT_REMOTE_COMMAND_H_
#define PSTRAIN_CLIENT_REMOTE_COMMAND_H_

// What every command that talks to a running cluster shares: the
// coordinator's address and the output format from the flags, and how a
// failure is reported.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "client/job_service_client.h"
#include "client/output_options.h"

namespace pstrain {

struct RemoteCommand {
  std::unique_ptr<JobServiceClient> client;
  OutputOptions output;
};

// The flags of every command that talks to a cluster (the coordinator's
// address, TLS, the client token) and then the command's `own`, for its
// Subcommand entry.
std::vector<std::string> RemoteCommandFlags(std::vector<std::string> own);

// From --coordinator_address / $PSTRAIN_COORDINATOR, --output and --progress. On a
// bad setting prints "pstrain COMMAND: ..." to stderr, sets *exit_code to
// kExitUsage and returns nullopt.
std::optional<RemoteCommand> SetUpRemoteCommand(absl::string_view command, int* exit_code);

// Prints "pstrain COMMAND: MESSAGE" to stderr (with a hint for an unknown
// job) and returns the exit code for `status` (ExitCodeForStatus).
int ReportFailure(absl::string_view command, const absl::Status& status);

// The job id argument of `status`, `watch`, `stop`: exactly one, else a
// usage message and nullopt.
std::optional<std::string> OneJobIdArgument(absl::string_view command,
                                            const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_REMOTE_COMMAND_H_
