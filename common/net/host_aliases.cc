#include "common/net/host_aliases.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/net/host_port.h"

namespace pstrain {

absl::StatusOr<HostAliases> HostAliases::Parse(absl::string_view text) {
  HostAliases aliases;
  if (absl::StripAsciiWhitespace(text).empty()) return aliases;
  int position = 0;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    ++position;
    entry = absl::StripAsciiWhitespace(entry);
    auto invalid = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(kHostAliasesEnv, ": entry ", position, " '", entry, "' ", why));
    };
    const std::pair<absl::string_view, absl::string_view> sides =
        absl::StrSplit(entry, absl::MaxSplits('=', 1));
    if (!absl::StrContains(entry, '=')) return invalid("is not FROM=TO (host:port=host:port)");
    const absl::string_view from = absl::StripAsciiWhitespace(sides.first);
    const absl::string_view to = absl::StripAsciiWhitespace(sides.second);
    for (absl::string_view side : {from, to}) {
      if (absl::StatusOr<HostPort> parsed = ParseHostPort(side); !parsed.ok()) {
        return invalid(parsed.status().message());
      }
    }
    auto [it, inserted] = aliases.aliases_.emplace(from, to);
    if (!inserted && it->second != to) {
      return invalid(absl::StrCat("maps ", from, " again: it already maps to ", it->second));
    }
  }
  return aliases;
}

const std::string& HostAliases::Resolve(const std::string& address) const {
  auto it = aliases_.find(address);
  return it == aliases_.end() ? address : it->second;
}

}  // namespace pstrain
