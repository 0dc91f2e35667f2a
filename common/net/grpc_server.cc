#include "common/net/grpc_server.h"

#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/net/host_port.h"
#include "common/net/keepalive.h"
#include "common/net/token_guarded_services.h"
#include "common/status/status_macros.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace pstrain {
namespace {

// A plaintext server with no service of its own: it holds the default
// health service (and reflection), which is all a probe may reach.
// `endpoint` gets the bound port.
absl::StatusOr<std::unique_ptr<grpc::Server>> StartHealthServer(HostPort& endpoint) {
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(endpoint.ToString(), grpc::InsecureServerCredentials(), &bound_port);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // A health check is a few bytes; nothing larger has a reason to arrive.
  builder.SetMaxReceiveMessageSize(4096);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot serve health on ", endpoint.ToString(),
                                               ": the port is in use or the host is not local"));
  }
  endpoint.port = bound_port;
  return server;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(
    const GrpcServerOptions& options, const std::vector<grpc::Service*>& services) {
  ASSIGN_OR_RETURN(HostPort endpoint, ParseHostPort(options.listen_address));
  std::optional<HostPort> health_endpoint;
  if (!options.health_listen_address.empty()) {
    ASSIGN_OR_RETURN(health_endpoint, ParseHostPort(options.health_listen_address));
  }
  if (options.max_message_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_message_bytes must be > 0, got ", options.max_message_bytes));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                   MakeServerCredentials(options.security));
  auto authenticator = std::make_unique<TokenAuthenticator>(options.security.client_token,
                                                            options.security.cluster_token);
  std::vector<std::unique_ptr<grpc::Service>> guarded_services;
  if (authenticator->enabled()) {
    for (grpc::Service* service : services) {
      ASSIGN_OR_RETURN(std::unique_ptr<grpc::Service> guarded,
                       GuardWithTokens(service, *authenticator));
      guarded_services.push_back(std::move(guarded));
    }
  }
  // Both apply to servers built afterwards; every pstrain server wants them.
  // Reflection lets grpcurl list and call the services; it also gives a
  // server with no services of its own (worker, evaluator) the one
  // synchronous service gRPC requires besides health.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(endpoint.ToString(), credentials, &bound_port);
  // gRPC sets SO_REUSEPORT by default, which lets a second process bind the
  // same port and silently take half of the traffic (two shards answering as
  // one). A taken port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  AcceptClientKeepalive(builder);
  if (authenticator->enabled()) {
    for (const auto& service : guarded_services) builder.RegisterService(service.get());
  } else {
    for (grpc::Service* service : services) builder.RegisterService(service);
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen_address,
                                               ": the port is in use or the host is not local"));
  }
  endpoint.port = bound_port;

  std::unique_ptr<grpc::Server> health_server;
  std::string health_address;
  if (health_endpoint.has_value()) {
    ASSIGN_OR_RETURN(health_server, StartHealthServer(*health_endpoint));
    health_address = health_endpoint->ToString();
  }
  return std::unique_ptr<GrpcServer>(new GrpcServer(
      std::move(authenticator), std::move(guarded_services), std::move(server), bound_port,
      endpoint.ToString(), std::move(health_server), std::move(health_address)));
}

GrpcServer::GrpcServer(std::unique_ptr<TokenAuthenticator> authenticator,
                       std::vector<std::unique_ptr<grpc::Service>> guarded_services,
                       std::unique_ptr<grpc::Server> server, int port, std::string address,
                       std::unique_ptr<grpc::Server> health_server, std::string health_address)
    : authenticator_(std::move(authenticator)),
      guarded_services_(std::move(guarded_services)),
      server_(std::move(server)),
      port_(port),
      address_(std::move(address)),
      health_server_(std::move(health_server)),
      health_address_(std::move(health_address)) {
  SetReady(false);  // NOT_SERVING, not an unknown service, until a member joins
}

GrpcServer::~GrpcServer() { Shutdown(absl::ZeroDuration()); }

void GrpcServer::SetServing(bool serving) {
  for (grpc::Server* server : {server_.get(), health_server_.get()}) {
    if (server == nullptr) continue;
    if (grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService()) {
      health->SetServingStatus(serving);
    }
  }
}

void GrpcServer::SetReady(bool ready) {
  for (grpc::Server* server : {server_.get(), health_server_.get()}) {
    if (server == nullptr) continue;
    if (grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService()) {
      health->SetServingStatus(kReadinessService, ready);
    }
  }
}

void GrpcServer::Shutdown(absl::Duration grace) {
  SetServing(false);
  // grpc::Server::Shutdown is itself idempotent.
  server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(grace));
  server_->Wait();
  // Last: until the main port has drained, probes keep seeing NOT_SERVING
  // rather than a refused connection.
  if (health_server_ != nullptr) {
    health_server_->Shutdown(std::chrono::system_clock::now());
    health_server_->Wait();
  }
}

}  // namespace pstrain
