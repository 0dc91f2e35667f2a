#ifndef PSTRAIN_COMMON_DAEMON_DAEMON_H_
#define PSTRAIN_COMMON_DAEMON_DAEMON_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/config/cluster_config.h"
#include "common/daemon/shutdown_signal.h"
#include "common/metrics/metrics_exposer.h"
#include "common/net/channel_security.h"
#include "common/net/grpc_server.h"
#include "prometheus/registry.h"

namespace pstrain {

struct DaemonOptions {
  // The process's role as shown in logs and metrics: "coordinator", "ps",
  // "worker", "evaluator".
  std::string role;
  // Where this process sits in the cluster (TF_CONFIG and flags). Its
  // listen_address is what grpc.listen_address binds.
  ClusterConfig cluster;
  // grpc.security holds the server's TLS and the tokens it checks.
  GrpcServerOptions grpc;
  // Every channel the daemon opens to its peers: their TLS (the daemon's
  // certificate as client certificate) and the cluster token. Default:
  // plaintext, no token.
  ChannelSecurity channel_security;
  // host:port of the Prometheus /metrics endpoint; port 0 picks one.
  // Default 127.0.0.1:0.
  std::string metrics_address = "127.0.0.1:0";
  // Serve that port as HTTPS with the gRPC server's certificate
  // (grpc.security) when it has one. Default false: plain HTTP, what a
  // Prometheus scrape config expects of every member; the coordinator,
  // whose port carries the console, sets it.
  bool metrics_tls = false;
  // Threads answering that port (HttpServerOptions::threads). Default 2;
  // the coordinator's, which also serves the console's pages and polls,
  // has 4.
  int metrics_threads = 2;
  // Where to write the ready file (see ready_file.h) once serving; empty:
  // none.
  std::string ready_file;
  // How long calls in flight may run on after SIGTERM before they are
  // cancelled. Default 10 s, below Kubernetes' 30 s termination grace.
  absl::Duration shutdown_grace = absl::Seconds(10);
};

// What every pstrain server process shares: a gRPC server with the health
// service, a Prometheus registry served on its own port, the ready file, and
// graceful shutdown on SIGTERM/SIGINT. Call BlockShutdownSignals() first in
// main. Thread-safe.
//
//   Daemon daemon(options);                      // registry() usable now
//   MyService service(core, *daemon.registry());
//   RETURN_IF_ERROR(daemon.Start({&service}));
//   daemon.WaitForShutdown();                    // SIGTERM, or a request
class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;
  ~Daemon();

  // The registry every metric of this process goes into. Valid before Start.
  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  // Serves `services` (borrowed), /metrics and the health port if asked,
  // then writes the ready file (with a `health` key when there is a health
  // port) and logs the addresses. Errors of GrpcServer::Start and
  // MetricsExposer::Start; Internal if the ready file cannot be written.
  absl::Status Start(const std::vector<grpc::Service*>& services);

  // Valid after Start.
  const std::string& grpc_address() const { return server_->address(); }
  // The plaintext health port's address; empty without one
  // (options().grpc.health_listen_address empty).
  const std::string& health_address() const { return server_->health_address(); }
  const std::string& metrics_address() const { return exposer_->address(); }
  // The server of the metrics port, for more pages. Valid after Start.
  HttpServer& http() { return exposer_->http(); }

  // Blocks until SIGTERM/SIGINT or RequestShutdown(), runs `before_stop`
  // (if any), then stops serving within the shutdown grace. Returns the
  // signal number, 0 for a request.
  int WaitForShutdown(const std::function<void()>& before_stop = nullptr);

  const DaemonOptions& options() const { return options_; }

  // The readiness health service's status (kReadinessService, what
  // Kubernetes' readinessProbe asks): a member is ready while it belongs to
  // the cluster. Valid after Start.
  void SetReady(bool ready) { server_->SetReady(ready); }

  // Makes WaitForShutdown return (from any thread), and the process exit
  // with `exit_code` (exit_codes.h): a one-shot cluster's members exit with
  // the outcome of its job.
  void RequestShutdown(int exit_code = 0) { shutdown_signal_.RequestShutdown(exit_code); }
  // What RequestShutdown asked for; 0 when it was not called.
  int requested_exit_code() const { return shutdown_signal_.requested_exit_code(); }

 private:
  // Constant after construction.
  const DaemonOptions options_;
  const std::shared_ptr<prometheus::Registry> registry_;

  ShutdownSignal shutdown_signal_;
  // Set by Start.
  std::unique_ptr<MetricsExposer> exposer_;
  std::unique_ptr<GrpcServer> server_;
};

// The options of a daemon of type `type` from the flags every daemon shares
// (defined in daemon_flags.cc: --listen, --health_listen, --metrics_listen,
// --ready_file,
// --shutdown_grace_secs, --max_message_mb, --coordinator_address,
// --ps_addresses, --task_index, and the TLS and token flags of
// security_flags.h) and the TF_CONFIG environment variable;
// flags win. Then every address listened on or dialled goes through the
// PSTRAIN_HOST_ALIASES environment variable, when set (host_aliases.h).
// InvalidArgument names the flag, TF_CONFIG field or alias at fault.
absl::StatusOr<DaemonOptions> DaemonOptionsFromFlags(TaskType type);

// "coordinator" for the chief, else the TF_CONFIG name ("ps", "worker", ...).
std::string RoleName(TaskType type);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DAEMON_DAEMON_H_
