#include "common/config/host_port.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

constexpr int kMaxPort = 65535;

absl::Status NotHostPort(absl::string_view address, absl::string_view why) {
  std::string message = absl::StrCat("'", address, "' is not host:port");
  if (!why.empty()) absl::StrAppend(&message, ": ", why);
  return absl::InvalidArgumentError(message);
}

// DNS names and IPv4 addresses: letters, digits, '-', '.', and '_' (which
// Kubernetes service names do not use, but some hosts files do).
bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_'; }

bool IsIpv6Char(char c) { return absl::ascii_isxdigit(c) || c == ':' || c == '.' || c == '%'; }

absl::StatusOr<HostPort> Parse(absl::string_view address, int min_port) {
  if (address.empty()) return absl::InvalidArgumentError("'' is not host:port: it is empty");
  if (address.find("://") != absl::string_view::npos) {
    return NotHostPort(address, "drop the scheme");
  }
  absl::string_view host;
  absl::string_view rest;
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == absl::string_view::npos) return NotHostPort(address, "missing ']'");
    host = address.substr(1, close - 1);
    rest = address.substr(close + 1);
    if (host.empty()) return NotHostPort(address, "the host is empty");
    for (char c : host) {
      if (!IsIpv6Char(c)) return NotHostPort(address, "bad character in the IPv6 host");
    }
    if (rest.empty() || rest.front() != ':') return NotHostPort(address, "");
    rest.remove_prefix(1);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) return NotHostPort(address, "");
    host = address.substr(0, colon);
    rest = address.substr(colon + 1);
    if (host.empty()) return NotHostPort(address, "the host is empty");
    if (host.find(':') != absl::string_view::npos) {
      return NotHostPort(address, "an IPv6 host needs brackets, as in [::1]:2222");
    }
    for (char c : host) {
      if (!IsNameChar(c)) return NotHostPort(address, "bad character in the host");
    }
  }
  if (rest.empty()) return NotHostPort(address, "the port is empty");
  // SimpleAtoi accepts a sign and surrounding spaces; a port is digits only.
  for (char c : rest) {
    if (!absl::ascii_isdigit(c)) {
      return NotHostPort(address, absl::StrCat("port '", rest, "' is not a number"));
    }
  }
  int port = 0;
  if (rest.size() > 5 || !absl::SimpleAtoi(rest, &port) || port < min_port || port > kMaxPort) {
    return NotHostPort(address,
                       absl::StrCat("port ", rest, " is not in ", min_port, "..", kMaxPort));
  }
  return HostPort{std::string(host), port};
}

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(absl::string_view address) { return Parse(address, 1); }

absl::StatusOr<HostPort> ParseListenAddress(absl::string_view address) { return Parse(address, 0); }

}  // namespace pstrain
