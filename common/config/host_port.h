#ifndef PSTRAIN_COMMON_CONFIG_HOST_PORT_H_
#define PSTRAIN_COMMON_CONFIG_HOST_PORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pstrain {

// A network address as flags and TF_CONFIG write it: "host:port".
struct HostPort {
  // A DNS name, an IPv4 address, or an IPv6 address without its brackets.
  std::string host;
  int port = 0;
};

// Parses the address of a peer: "host:port" with a decimal port in 1..65535.
// IPv6 hosts are written in brackets ("[::1]:2222"), as gRPC expects them.
// Returns InvalidArgument quoting `address` when it is not of that form, e.g.
// "'localhost' is not host:port". Callers prefix the flag or field it came
// from.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view address);

// Like ParseHostPort, but also accepts port 0, which asks the server to pick a
// free port (tests and the local launcher do this to avoid collisions).
absl::StatusOr<HostPort> ParseListenAddress(absl::string_view address);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_HOST_PORT_H_
