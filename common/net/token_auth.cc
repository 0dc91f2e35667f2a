#include "common/net/token_auth.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status/grpc_status.h"
#include "glog/logging.h"

namespace pstrain {

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? a[i] : 0;
    const unsigned char y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

TokenAuthenticator::TokenAuthenticator(std::string client_token, std::string cluster_token)
    : client_token_(std::move(client_token)), cluster_token_(std::move(cluster_token)) {}

absl::Status TokenAuthenticator::Authorize(TokenScope scope,
                                           std::optional<absl::string_view> authorization) const {
  const std::string& own = scope == TokenScope::kCluster ? cluster_token_ : client_token_;
  if (own.empty()) return absl::OkStatus();
  if (!authorization.has_value()) {
    return absl::UnauthenticatedError("this call needs a bearer token and none was sent");
  }
  absl::string_view token = *authorization;
  if (!absl::ConsumePrefix(&token, "Bearer ") && !absl::ConsumePrefix(&token, "bearer ")) {
    return absl::UnauthenticatedError("the authorization metadata is not 'Bearer <token>'");
  }
  const bool is_client = !client_token_.empty() && ConstantTimeEquals(token, client_token_);
  const bool is_cluster = !cluster_token_.empty() && ConstantTimeEquals(token, cluster_token_);
  switch (scope) {
    case TokenScope::kClientAdmin:
      if (is_client) return absl::OkStatus();
      if (is_cluster) {
        return absl::PermissionDeniedError(
            "the cluster token cannot call the client API's "
            "admin calls; use the client token");
      }
      break;
    case TokenScope::kClientRead:
      if (is_client || is_cluster) return absl::OkStatus();
      break;
    case TokenScope::kCluster:
      if (is_cluster) return absl::OkStatus();
      if (is_client) {
        return absl::PermissionDeniedError(
            "the client token cannot call cluster-internal services; use the cluster token");
      }
      break;
  }
  return absl::UnauthenticatedError("wrong bearer token");
}

grpc::Status TokenAuthenticator::Check(TokenScope scope, absl::string_view method,
                                       const grpc::CallbackServerContext& context) const {
  std::optional<absl::string_view> authorization;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    authorization = absl::string_view(it->second.data(), it->second.size());
  }
  absl::Status status = Authorize(scope, authorization);
  if (status.ok()) return grpc::Status::OK;
  LOG(WARNING) << "refused " << method << " from " << context.peer() << ": " << status.message();
  return ToGrpcStatus(status);
}

}  // namespace pstrain
