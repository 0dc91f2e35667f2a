// pstrain-ps: one parameter-server shard of a pstrain cluster.

#include "common/daemon/daemon_main.h"

namespace {

constexpr char kUsage[] =
    "pstrain-ps: one parameter-server shard of a pstrain cluster. It holds its part of the\n"
    "variables and their optimizer slots, applies pushed gradients, answers pulls, and\n"
    "writes and restores its part of each checkpoint.\n"
    "\n"
    "Usage: pstrain-ps [--listen=HOST:PORT] [--metrics_listen=HOST:PORT]\n"
    "\n"
    "Serves the gRPC health service and Prometheus metrics on /metrics. Exits 0 on\n"
    "SIGTERM or SIGINT after letting calls in flight finish (--shutdown_grace_secs).";

// The shard's services join here as they are built.
class ParameterServerComponents : public pstrain::DaemonComponents {
 public:
  std::vector<grpc::Service*> services() override { return {}; }
};

}  // namespace

int main(int argc, char** argv) {
  return pstrain::RunDaemonMain(
      "ps", kUsage, argc, argv,
      [](pstrain::Daemon&) -> absl::StatusOr<std::unique_ptr<pstrain::DaemonComponents>> {
        return std::make_unique<ParameterServerComponents>();
      });
}
