#ifndef PSTRAIN_COMMON_NET_GRPC_SERVER_H_
#define PSTRAIN_COMMON_NET_GRPC_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/net/channel_security.h"
#include "common/net/token_auth.h"
#include "grpcpp/impl/codegen/service_type.h"
#include "grpcpp/server.h"

namespace pstrain {

struct GrpcServerOptions {
  // host:port to listen on. Port 0 picks a free port (see GrpcServer::port).
  // Default 127.0.0.1:0: nothing is reachable from other machines unless
  // asked for.
  std::string listen_address = "127.0.0.1:0";
  // Largest message received or sent. Default 16 MiB: tensors travel in
  // chunks of 1 MiB, so anything larger is a mistake or an attack.
  int max_message_bytes = 16 << 20;
  // TLS (tls_cert_file, tls_key_file, tls_ca_file, tls_require_client_cert)
  // and the tokens every call but health checks and reflection must carry
  // (client_token, cluster_token; see token_guarded_services.h). Default:
  // plaintext, no tokens.
  SecurityOptions security;
  // host:port of a second, plaintext port that serves the health service
  // (grpc.health.v1.Health, reporting the same status as the main port, with
  // no token) and reflection, which lists only those two: none of the
  // services passed to Start. For probes that cannot speak TLS,
  // such as the kubelet's gRPC probes, when the main port serves TLS. Port 0
  // picks a free port. Default empty: none; health is on the main port only.
  std::string health_listen_address;
};

// The health service name whose status is the daemon's readiness
// (Kubernetes' readinessProbe `grpc.service`): a member is ready while it
// belongs to the cluster, the coordinator once it serves.
inline constexpr char kReadinessService[] = "readiness";

// A started gRPC server with the standard health service
// (grpc.health.v1.Health) answering SERVING for "" (the whole server: the
// process is alive and serves) and, after SetReady(true), for
// kReadinessService (another service name gets NOT_FOUND), and server
// reflection. Thread-safe.
class GrpcServer {
 public:
  // Starts serving `services`, which are borrowed and must outlive the server.
  // InvalidArgument: listen_address or health_listen_address is not
  // host:port, the TLS files are missing or unreadable, or tokens are set
  // and a service cannot check them.
  // Unavailable: an address cannot be bound (in use, not local).
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(
      const GrpcServerOptions& options, const std::vector<grpc::Service*>& services);

  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;
  // Shuts down with no grace if Shutdown was not called.
  ~GrpcServer();

  // The bound port (the picked one when the options said 0).
  int port() const { return port_; }
  // host:port with the bound port.
  const std::string& address() const { return address_; }
  // host:port of the plaintext health port with its bound port; empty when
  // options.health_listen_address was.
  const std::string& health_address() const { return health_address_; }

  // Health probes, on both ports, see NOT_SERVING while false (draining,
  // not ready).
  void SetServing(bool serving);

  // kReadinessService's status on both ports: NOT_SERVING until the first
  // SetReady(true), and again from Shutdown on.
  void SetReady(bool ready);

  // Reports NOT_SERVING, stops accepting calls, lets calls in flight finish
  // for up to `grace`, then cancels the rest. Idempotent.
  void Shutdown(absl::Duration grace);

 private:
  GrpcServer(std::unique_ptr<TokenAuthenticator> authenticator,
             std::vector<std::unique_ptr<grpc::Service>> guarded_services,
             std::unique_ptr<grpc::Server> server, int port, std::string address,
             std::unique_ptr<grpc::Server> health_server, std::string health_address);

  // Constant after construction. The server goes first on destruction: it
  // borrows the guarded services, which borrow the authenticator.
  const std::unique_ptr<TokenAuthenticator> authenticator_;
  const std::vector<std::unique_ptr<grpc::Service>> guarded_services_;
  const std::unique_ptr<grpc::Server> server_;
  const int port_;
  const std::string address_;
  // Null when there is no separate health port.
  const std::unique_ptr<grpc::Server> health_server_;
  const std::string health_address_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_GRPC_SERVER_H_
