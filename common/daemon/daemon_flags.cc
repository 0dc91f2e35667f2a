// The flags every pstrain daemon shares, turned into DaemonOptions.

#include "absl/strings/str_cat.h"
#include "common/daemon/daemon.h"
#include "common/net/host_port.h"
#include "gflags/gflags.h"

DEFINE_string(listen, "127.0.0.1:0",
              "host:port for the gRPC server; port 0 picks a free port (written to the log "
              "and to --ready_file). Use 0.0.0.0:PORT to accept other machines.");
DEFINE_string(metrics_listen, "127.0.0.1:0",
              "host:port for the Prometheus /metrics endpoint; port 0 picks a free port.");
DEFINE_string(ready_file, "",
              "Once serving, write the bound addresses here as key=value lines (grpc, "
              "metrics, pid, role); used by launchers when ports are picked at start.");
DEFINE_double(shutdown_grace_secs, 10,
              "On SIGTERM/SIGINT, how long calls in flight may finish before they are "
              "cancelled.");
DEFINE_int32(max_message_mb, 16, "Largest gRPC message received or sent, in MiB.");

namespace pstrain {

absl::StatusOr<DaemonOptions> DaemonOptionsFromFlags(const std::string& role) {
  if (FLAGS_max_message_mb < 1 || FLAGS_max_message_mb > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_message_mb must be in [1, 1024], got ", FLAGS_max_message_mb));
  }
  if (!(FLAGS_shutdown_grace_secs >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shutdown_grace_secs must be >= 0, got ", FLAGS_shutdown_grace_secs));
  }
  for (const auto& [flag, value] :
       {std::pair<const char*, const std::string&>{"--listen", FLAGS_listen},
        {"--metrics_listen", FLAGS_metrics_listen}}) {
    if (absl::StatusOr<HostPort> parsed = ParseHostPort(value); !parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": ", parsed.status().message()));
    }
  }
  DaemonOptions options;
  options.role = role;
  options.grpc.listen_address = FLAGS_listen;
  options.grpc.max_message_bytes = FLAGS_max_message_mb << 20;
  options.metrics_address = FLAGS_metrics_listen;
  options.ready_file = FLAGS_ready_file;
  options.shutdown_grace = absl::Seconds(FLAGS_shutdown_grace_secs);
  return options;
}

}  // namespace pstrain
