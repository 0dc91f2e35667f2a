#include "common/net/health_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "protos/health.grpc.pb.h"

namespace pstrain {

absl::Status CheckHealth(const std::string& address, absl::Duration timeout,
                         const std::string& service, const ChannelSecurity& security) {
  ChannelSecurity without_token = security;
  without_token.token.clear();
  // A connection of its own: channels of one process share connections to
  // an address, and one another channel made to a process since killed
  // would fail this check of the process that now listens there.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto stub = grpc::health::v1::Health::NewStub(
      CreateSecureChannel(address, without_token, std::move(args)));
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
