#ifndef PSTRAIN_COMMON_NET_TOKEN_AUTH_H_
#define PSTRAIN_COMMON_NET_TOKEN_AUTH_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/server_context.h"

namespace pstrain {

// Who may make a call.
enum class TokenScope {
  // JobService calls that change the cluster (SubmitJob, StopJob, Shutdown,
  // ExportModel): the client token only.
  kClientAdmin,
  // JobService calls that only read: the client or the cluster token.
  kClientRead,
  // ClusterService and ParameterServer: the cluster token only.
  kCluster,
};

// Checks the bearer token (`authorization: Bearer <token>` metadata) of
// incoming calls against the client and cluster tokens. A scope whose token
// is empty is open (kClientRead follows the client token). Tokens are
// compared in constant time and never logged. Thread-safe (immutable).
class TokenAuthenticator {
 public:
  TokenAuthenticator(std::string client_token, std::string cluster_token);

  // True when any token is set, i.e. some call is checked.
  bool enabled() const { return !client_token_.empty() || !cluster_token_.empty(); }

  // `authorization` is the metadata value, nullopt when absent.
  // OK: allowed. Unauthenticated: no token, or a token that is neither.
  // PermissionDenied: a valid token of the other kind (a cluster token on
  // an admin call, a client token on a cluster call).
  absl::Status Authorize(TokenScope scope, std::optional<absl::string_view> authorization) const;

  // Authorize on the call's metadata; a refusal is logged with the method
  // and the peer (never the token) and returned as a grpc::Status.
  grpc::Status Check(TokenScope scope, absl::string_view method,
                     const grpc::CallbackServerContext& context) const;

 private:
  const std::string client_token_;
  const std::string cluster_token_;
};

// Whether `a` equals `b`, in time that depends on their lengths only.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_TOKEN_AUTH_H_
