#ifndef PSTRAIN_COMMON_NET_HOST_PORT_H_
#define PSTRAIN_COMMON_NET_HOST_PORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pstrain {

// A network endpoint as written on command lines and in TF_CONFIG:
// "host:port", "[::1]:port" or "host:0" (pick a free port).
struct HostPort {
  std::string host;  // without brackets
  int port = 0;      // 0..65535

  // "host:port", with brackets around an IPv6 host.
  std::string ToString() const;
};

// InvalidArgument naming the text when it is not host:port with a numeric
// port in [0, 65535] and a non-empty host.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view text);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_HOST_PORT_H_
