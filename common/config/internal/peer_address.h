#ifndef PSTRAIN_COMMON_CONFIG_INTERNAL_PEER_ADDRESS_H_
#define PSTRAIN_COMMON_CONFIG_INTERNAL_PEER_ADDRESS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/net/host_port.h"

namespace pstrain {
namespace config_internal {

// Parses the address of another process, as TF_CONFIG and the cluster flags
// give it: host:port as ParseHostPort reads it, and stricter, because a typo
// here surfaces much later as a connection that never succeeds:
//   the port is in 1..65535 (a peer cannot be at "pick a free port");
//   the port is written in decimal digits only ("+80", " 80" are refused);
//   the host is a DNS name or IPv4 address (letters, digits, '-', '.', '_'),
//   or an IPv6 address in brackets; a URL scheme is refused.
// Returns InvalidArgument quoting `address`: "'localhost' is not host:port:
// ...". Callers prefix the flag or field it came from.
absl::StatusOr<HostPort> ParsePeerAddress(absl::string_view address);

}  // namespace config_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_INTERNAL_PEER_ADDRESS_H_
