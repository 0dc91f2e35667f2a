#ifndef PSTRAIN_COMMON_NET_HOST_IDENTITY_H_
#define PSTRAIN_COMMON_NET_HOST_IDENTITY_H_

#include <string>

#include "absl/status/statusor.h"

namespace pstrain {

// Returns a string that two processes running at the same time get alike
// exactly when they run on the same booted kernel and in the same network
// namespace, i.e. when one can reach the other's abstract Unix sockets (see
// common/net/unix_socket.h) and share memory with it. Peers exchange it to
// decide whether to use those instead of the network. Linux only;
// thread-safe.
//
// The form is "<boot id>:<network namespace inode>", e.g.
// "0b4c1a4e-2f0d-4a38-9a57-5e1c2d3f4a5b:4026531840". Both parts are needed:
// the boot id tells hosts (and two boots of one host) apart, and the network
// namespace tells containers on one host apart, since abstract Unix sockets
// are per network namespace. Namespace inode numbers are reused once a
// namespace is gone, so compare identities of live processes, not ones saved
// from an earlier run.
//
// Unavailable: /proc/sys/kernel/random/boot_id or /proc/self/ns/net cannot
//   be read (e.g. /proc is not mounted); the message names the path.
absl::StatusOr<std::string> LocalHostIdentity();

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_HOST_IDENTITY_H_
