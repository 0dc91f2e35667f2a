#include "common/net/host_port.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace pstrain {

std::string HostPort::ToString() const {
  if (absl::StrContains(host, ':')) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<HostPort> ParseHostPort(absl::string_view text) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not host:port: ", why));
  };
  HostPort result;
  absl::string_view port_text;
  if (absl::StartsWith(text, "[")) {
    const size_t close = text.find(']');
    if (close == absl::string_view::npos) return invalid("'[' without ']'");
    result.host = std::string(text.substr(1, close - 1));
    absl::string_view rest = text.substr(close + 1);
    if (!absl::StartsWith(rest, ":")) return invalid("no ':port' after the IPv6 address");
    port_text = rest.substr(1);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos) return invalid("no ':port'");
    result.host = std::string(text.substr(0, colon));
    if (absl::StrContains(result.host, ':')) return invalid("IPv6 hosts need [brackets]");
    port_text = text.substr(colon + 1);
  }
  if (result.host.empty()) return invalid("empty host");
  int port = -1;
  if (port_text.empty() || !absl::SimpleAtoi(port_text, &port) || port < 0 || port > 65535) {
    return invalid("the port must be a number from 0 to 65535");
  }
  result.port = port;
  return result;
}

}  // namespace pstrain
