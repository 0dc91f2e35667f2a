#include "client/coordinator_address.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/net/coordinator_address_flag.h"
#include "common/net/host_port.h"

namespace pstrain {

absl::StatusOr<CoordinatorAddress> ResolveCoordinatorAddress(const std::string& flag_value,
                                                            const std::string& env_value,
                                                            AddressUse use) {
  CoordinatorAddress address;
  if (!flag_value.empty()) {
    address = {flag_value, "--coordinator_address"};
  } else if (!env_value.empty()) {
    address = {env_value, kCoordinatorEnvVar};
  } else {
    address = {absl::StrCat("localhost:", kDefaultCoordinatorPort), "the default"};
  }
  absl::StatusOr<HostPort> parsed = ParseHostPort(address.host_port);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(address.source, ": ", parsed.status().message()));
  }
  if (parsed->port == 0 && use == AddressUse::kConnect) {
    return absl::InvalidArgumentError(
        absl::StrCat(address.source, ": '", address.host_port, "' has port 0; give the port the "
                     "coordinator listens on"));
  }
  return address;
}

absl::StatusOr<CoordinatorAddress> CoordinatorAddressFromFlags(AddressUse use) {
  const char* env = std::getenv(kCoordinatorEnvVar);
  return ResolveCoordinatorAddress(FLAGS_coordinator_address, env == nullptr ? "" : env,
                                   use);
}

}  // namespace pstrain
