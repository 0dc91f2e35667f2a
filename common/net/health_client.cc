#include "common/net/health_client.h"

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "protos/health.grpc.pb.h"

namespace pstrain {

absl::Status CheckHealth(const std::string& address, absl::Duration timeout,
                         const std::string& service, const ChannelSecurity& security) {
  ChannelSecurity without_token = security;
  without_token.token.clear();
  auto stub =
      grpc::health::v1::Health::NewStub(CreateSecureChannel(address, without_token));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  absl::Status status = FromGrpcStatus(stub->Check(&context, request, &response));
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("health check of ", address, ": ", status.message()));
  }
  if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    return absl::FailedPreconditionError(
        absl::StrCat(address, " is ",
                     grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())));
  }
  return absl::OkStatus();
}

}  // namespace pstrain
