#include "client/remote_command.h"

#include <iostream>

#include "client/coordinator_address.h"
#include "client/exit_code.h"
#include "common/net/security_flags.h"

namespace pstrain {

std::vector<std::string> RemoteCommandFlags(std::vector<std::string> own) {
  std::vector<std::string> flags = {
      "coordinator_address", "tls_ca",           "tls_cert", "tls_key",
      "tls_server_name",     "client_token_file"};
  flags.insert(flags.end(), own.begin(), own.end());
  return flags;
}

std::optional<RemoteCommand> SetUpRemoteCommand(absl::string_view command, int* exit_code) {
  absl::StatusOr<CoordinatorAddress> address = CoordinatorAddressFromFlags();
  absl::StatusOr<OutputOptions> output = OutputOptionsFromFlags();
  absl::StatusOr<ChannelSecurity> security = ClientChannelSecurityFromFlags();
  for (const absl::Status& status : {address.status(), output.status(), security.status()}) {
    if (!status.ok()) {
      std::cerr << "pstrain " << command << ": " << status.message() << "\n";
      *exit_code = kExitUsage;
      return std::nullopt;
    }
  }
  return RemoteCommand{
      std::make_unique<JobServiceClient>(address->host_port, absl::Seconds(30), *security),
      *output};
}

int ReportFailure(absl::string_view command, const absl::Status& status) {
  std::cerr << "pstrain " << command << ": " << status.message();
  if (status.code() == absl::StatusCode::kNotFound) {
    std::cerr << " (`pstrain list` shows the jobs the coordinator knows)";
  }
  std::cerr << "\n";
  return ExitCodeForStatus(status);
}

std::optional<std::string> OneJobIdArgument(absl::string_view command,
                                            const std::vector<std::string>& args) {
  if (args.size() == 1 && !args[0].empty()) return args[0];
  std::cerr << "pstrain " << command << ": expected one job id, got " << args.size()
            << " arguments (see pstrain " << command << " --help)\n";
  return std::nullopt;
}

}  // namespace pstrain
