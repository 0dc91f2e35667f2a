#include "common/config/internal/peer_address.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace pstrain {
namespace config_internal {
namespace {

absl::Status NotHostPort(absl::string_view address, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("'", address, "' is not host:port: ", why));
}

bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_'; }

bool IsIpv6Char(char c) { return absl::ascii_isxdigit(c) || c == ':' || c == '.' || c == '%'; }

}  // namespace

absl::StatusOr<HostPort> ParsePeerAddress(absl::string_view address) {
  if (absl::StrContains(address, "://")) return NotHostPort(address, "drop the URL scheme");
  absl::StatusOr<HostPort> parsed = ParseHostPort(address);
  if (!parsed.ok()) return parsed.status();
  const bool ipv6 = absl::StartsWith(address, "[");
  for (char c : parsed->host) {
    if (!(ipv6 ? IsIpv6Char(c) : IsNameChar(c))) {
      return NotHostPort(address,
                         absl::StrCat("bad character '", std::string(1, c), "' in the host"));
    }
  }
  const absl::string_view port_text = address.substr(address.rfind(':') + 1);
  for (char c : port_text) {
    if (!absl::ascii_isdigit(c)) {
      return NotHostPort(address, absl::StrCat("the port '", port_text, "' is not a number"));
    }
  }
  if (parsed->port == 0) {
    return NotHostPort(address, "port 0 means \"pick a free port\"; a peer needs its real port");
  }
  return parsed;
}

}  // namespace config_internal
}  // namespace pstrain
