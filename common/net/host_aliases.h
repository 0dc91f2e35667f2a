#ifndef PSTRAIN_COMMON_NET_HOST_ALIASES_H_
#define PSTRAIN_COMMON_NET_HOST_ALIASES_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pstrain {

// The environment variable a daemon reads its host aliases from, next to
// TF_CONFIG.
inline constexpr char kHostAliasesEnv[] = "PSTRAIN_HOST_ALIASES";

// Addresses to use in place of the ones a cluster's flags and TF_CONFIG
// name, as in PSTRAIN_HOST_ALIASES="pstrain-ps-0.pstrain-ps:7071=127.0.0.1:41234,
// 0.0.0.0:7071=127.0.0.1:41234". It lets the processes of a Kubernetes
// manifest run unchanged on one machine: each pod's Service names and
// fixed ports (the same port in every pod, since each pod has a network of
// its own) become distinct loopback ports. An entry maps a whole host:port,
// not a host, because two pods listen on the same port.
//
// Applied once, where a daemon resolves its cluster configuration, to every
// address it listens on or dials. Immutable and thread-safe.
class HostAliases {
 public:
  // No aliases: Resolve returns every address unchanged.
  HostAliases() = default;

  // Parses comma-separated FROM=TO entries, each side host:port; blank text
  // means no aliases, blanks around entries are ignored. InvalidArgument,
  // starting with "PSTRAIN_HOST_ALIASES", naming the entry: no '=', a side
  // that is not host:port, or one FROM given two different targets.
  static absl::StatusOr<HostAliases> Parse(absl::string_view text);

  // The alias of `address` (compared as written), else `address` itself.
  const std::string& Resolve(const std::string& address) const;

  bool empty() const { return aliases_.empty(); }

 private:
  absl::flat_hash_map<std::string, std::string> aliases_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_HOST_ALIASES_H_
