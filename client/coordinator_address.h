#ifndef PSTRAIN_CLIENT_COORDINATOR_ADDRESS_H_
#define PSTRAIN_CLIENT_COORDINATOR_ADDRESS_H_

// Where the commands find the coordinator: --coordinator_address, else the
// environment variable PSTRAIN_COORDINATOR, else localhost:7070, the port
// `pstrain local` gives its coordinator when that port is free.

#include <string>

#include "absl/status/statusor.h"

namespace pstrain {

inline constexpr int kDefaultCoordinatorPort = 7070;
inline constexpr char kCoordinatorEnvVar[] = "PSTRAIN_COORDINATOR";

struct CoordinatorAddress {
  std::string host_port;  // "localhost:7070"
  // Where it came from, for messages: "--coordinator_address",
  // "PSTRAIN_COORDINATOR"
  // or "the default".
  std::string source;
  bool is_default() const { return source == "the default"; }
};

// What the address is for.
enum class AddressUse {
  // A command connects to a coordinator there: the port must be given.
  kConnect,
  // `pstrain local` starts its coordinator there: port 0 means "pick a
  // free port".
  kListen,
};

// Resolves the address from the flag's value and the environment variable's
// (either may be empty). InvalidArgument naming the source when the chosen
// value is not host:port, or has port 0 for AddressUse::kConnect.
absl::StatusOr<CoordinatorAddress> ResolveCoordinatorAddress(const std::string& flag_value,
                                                            const std::string& env_value,
                                                            AddressUse use = AddressUse::kConnect);

// ResolveCoordinatorAddress of --coordinator_address and $PSTRAIN_COORDINATOR.
absl::StatusOr<CoordinatorAddress> CoordinatorAddressFromFlags(
    AddressUse use = AddressUse::kConnect);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_COORDINATOR_ADDRESS_H_
