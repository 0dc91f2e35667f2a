#ifndef PSTRAIN_COMMON_NET_SECURITY_FLAGS_H_
#define PSTRAIN_COMMON_NET_SECURITY_FLAGS_H_

// The TLS and token flags, defined once for every daemon and the `pstrain`
// client: --tls_cert, --tls_key, --tls_ca, --tls_client_auth,
// --tls_server_name, --client_token_file (the coordinator checks it, the
// client sends it, else $PSTRAIN_TOKEN) and --cluster_token_file. Tokens
// come from files, never the command line, so they do not show in `ps`.
// Everything is off by default.

#include "absl/status/statusor.h"
#include "common/net/channel_security.h"

namespace pstrain {

// A daemon's security: its server's TLS and both tokens it checks (read
// from --client_token_file and --cluster_token_file). InvalidArgument names
// the flag or file at fault.
absl::StatusOr<SecurityOptions> DaemonSecurityFromFlags();

// The `pstrain` client's channel: TLS when --tls_ca or --tls_cert is set,
// the token from --client_token_file, else $PSTRAIN_TOKEN.
absl::StatusOr<ChannelSecurity> ClientChannelSecurityFromFlags();

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_SECURITY_FLAGS_H_
