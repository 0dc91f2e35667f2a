// The flags every pstrain daemon shares, turned into DaemonOptions.

#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/config/cluster_config.h"
#include "common/config/tf_config.h"
#include "common/daemon/daemon.h"
#include "common/net/coordinator_address_flag.h"
#include "common/net/host_aliases.h"
#include "common/net/host_port.h"
#include "common/net/message_limit_flags.h"
#include "common/net/security_flags.h"
#include "common/status/status_macros.h"
#include "gflags/gflags.h"

// Cluster flags are empty by default: a set flag overrides TF_CONFIG, field
// by field, so a non-empty default would always override it.
DEFINE_string(listen, "",
              "host:port for the gRPC server; port 0 picks a free port (written to the log "
              "and to --ready_file). Default: 0.0.0.0:<port> when TF_CONFIG lists this "
              "task, else 127.0.0.1:0 (loopback only).");
DEFINE_string(advertise_address, "",
              "host:port peers dial to reach this process, when it is not where it listens "
              "(behind NAT or a proxy); overrides TF_CONFIG's entry for this task. Default: "
              "TF_CONFIG's entry, else the address --listen bound.");
DEFINE_string(health_listen, "",
              "host:port for a second, plaintext port serving only the gRPC health service "
              "(same status as --listen's), for probes that cannot speak TLS such as the "
              "kubelet's gRPC probes; port 0 picks a free port. Default: none, health is "
              "served on --listen only.");
DEFINE_string(ps_addresses, "",
              "Comma-separated host:port of every parameter server, in shard order; overrides "
              "TF_CONFIG's cluster.ps.");
DEFINE_int32(task_index, -1,
             "This process's index within its role (ps/0, ps/1, ...); default TF_CONFIG's "
             "task.index, else 0.");
DEFINE_string(metrics_listen, "127.0.0.1:0",
              "host:port for the Prometheus /metrics endpoint; port 0 picks a free port. The "
              "coordinator also serves its web console there, as HTTPS under --tls_cert.");
DEFINE_string(ready_file, "",
              "Once serving, write the bound addresses here as key=value lines (grpc, "
              "metrics, pid, role); used by launchers when ports are picked at start.");
DEFINE_double(shutdown_grace_secs, 10,
              "On SIGTERM/SIGINT, how long calls in flight may finish before they are "
              "cancelled.");

namespace pstrain {
namespace {

// Puts each address the cluster configuration listens on or dials through
// `aliases` (see host_aliases.h), so the rest of the process sees only
// addresses it can use.
void ApplyHostAliases(const HostAliases& aliases, ClusterConfig& cluster) {
  if (aliases.empty()) return;
  for (auto* list : {cluster.spec.mutable_chief(), cluster.spec.mutable_ps(),
                     cluster.spec.mutable_worker(), cluster.spec.mutable_evaluator()}) {
    for (std::string& address : *list) address = aliases.Resolve(address);
  }
  for (std::string& address : cluster.ps_addresses) address = aliases.Resolve(address);
  cluster.coordinator_address = aliases.Resolve(cluster.coordinator_address);
  cluster.own_address = aliases.Resolve(cluster.own_address);
  cluster.listen_address = aliases.Resolve(cluster.listen_address);
}

}  // namespace

std::string RoleName(TaskType type) {
  return type == TASK_TYPE_CHIEF ? "coordinator" : std::string(TaskTypeName(type));
}

absl::StatusOr<DaemonOptions> DaemonOptionsFromFlags(TaskType type) {
  ASSIGN_OR_RETURN(const int max_message_bytes, MaxMessageBytesFromFlags());
  if (!(FLAGS_shutdown_grace_secs >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shutdown_grace_secs must be >= 0, got ", FLAGS_shutdown_grace_secs));
  }
  if (absl::StatusOr<HostPort> parsed = ParseHostPort(FLAGS_metrics_listen); !parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics_listen: ", parsed.status().message()));
  }

  ClusterFlags flags;
  flags.coordinator_address = FLAGS_coordinator_address;
  flags.ps_addresses = FLAGS_ps_addresses;
  flags.listen_address = FLAGS_listen;
  // Any negative value means "not given"; ResolveClusterConfig refuses
  // nothing it does not see, so -1 is the only sentinel.
  if (FLAGS_task_index != -1) flags.task_index = FLAGS_task_index;
  std::optional<std::string> tf_config;
  if (const char* value = std::getenv("TF_CONFIG")) tf_config = value;

  DaemonOptions options;
  options.role = RoleName(type);
  ASSIGN_OR_RETURN(options.cluster, ResolveClusterConfig(flags, tf_config, type));
  const char* aliases_text = std::getenv(kHostAliasesEnv);
  ASSIGN_OR_RETURN(HostAliases aliases,
                   HostAliases::Parse(aliases_text == nullptr ? "" : aliases_text));
  if (!FLAGS_advertise_address.empty()) {
    if (absl::StatusOr<HostPort> parsed = ParseHostPort(FLAGS_advertise_address);
        !parsed.ok() || parsed->port == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--advertise_address: '", FLAGS_advertise_address,
          "' is not host:port with a port peers can dial (not 0)"));
    }
    options.cluster.own_address = FLAGS_advertise_address;
  }
  ApplyHostAliases(aliases, options.cluster);
  options.grpc.listen_address = options.cluster.listen_address;
  options.grpc.max_message_bytes = max_message_bytes;
  if (!FLAGS_health_listen.empty()) {
    if (absl::StatusOr<HostPort> parsed = ParseHostPort(FLAGS_health_listen); !parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--health_listen: ", parsed.status().message()));
    }
    options.grpc.health_listen_address = aliases.Resolve(FLAGS_health_listen);
  }
  options.metrics_address = aliases.Resolve(FLAGS_metrics_listen);
  // The coordinator's port carries the console, which the client token
  // guards: under TLS it must not travel in the clear.
  options.metrics_tls = type == TASK_TYPE_CHIEF;
  if (type == TASK_TYPE_CHIEF) options.metrics_threads = 4;
  options.ready_file = FLAGS_ready_file;
  options.shutdown_grace = absl::Seconds(FLAGS_shutdown_grace_secs);
  ASSIGN_OR_RETURN(options.grpc.security, DaemonSecurityFromFlags());
  ASSIGN_OR_RETURN(options.channel_security,
                   MakeChannelSecurity(options.grpc.security, options.grpc.security.cluster_token));
  options.channel_security.max_message_bytes = max_message_bytes;
  return options;
}

}  // namespace pstrain
