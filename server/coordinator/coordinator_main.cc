// pstrain-coordinator: the chief of a pstrain cluster.

#include "common/daemon/daemon_main.h"

namespace {

constexpr char kUsage[] =
    "pstrain-coordinator: the chief of a pstrain cluster. It holds the job queue and the\n"
    "running job, tracks membership, the global step and every stop condition, and serves\n"
    "the client API that `pstrain` talks to.\n"
    "\n"
    "Usage: pstrain-coordinator [--listen=HOST:PORT] [--metrics_listen=HOST:PORT]\n"
    "   or: TF_CONFIG='{\"cluster\": {\"chief\": [...], ...}, \"task\": {\"type\": \"chief\"}}'\n"
    "       pstrain-coordinator   (flags win over TF_CONFIG)\n"
    "\n"
    "Serves the gRPC health service and Prometheus metrics on /metrics. Exits 0 on\n"
    "SIGTERM or SIGINT after letting calls in flight finish (--shutdown_grace_secs).";

// The coordinator's services join here as they are built.
class CoordinatorComponents : public pstrain::DaemonComponents {
 public:
  std::vector<grpc::Service*> services() override { return {}; }
};

}  // namespace

int main(int argc, char** argv) {
  return pstrain::RunDaemonMain(
      pstrain::TASK_TYPE_CHIEF, kUsage, argc, argv,
      [](pstrain::Daemon&) -> absl::StatusOr<std::unique_ptr<pstrain::DaemonComponents>> {
        return std::make_unique<CoordinatorComponents>();
      });
}
