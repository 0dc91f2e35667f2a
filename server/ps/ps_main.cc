// pstrain-ps: one parameter-server shard of a pstrain cluster.

#include "common/daemon/daemon_main.h"

namespace {

constexpr char kUsage[] =
    "pstrain-ps: one parameter-server shard of a pstrain cluster. It holds its part of the\n"
    "variables and their optimizer slots, applies pushed gradients, answers pulls, and\n"
    "writes and restores its part of each checkpoint.\n"
    "\n"
    "Usage: pstrain-ps --coordinator_address=HOST:PORT [--task_index=N] [--listen=HOST:PORT]\n"
    "   or: TF_CONFIG='{\"cluster\": {...}, \"task\": {...}}' pstrain-ps\n"
    "Flags win over TF_CONFIG (as TensorFlow and Kubeflow's TFJob set it).\n"
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
      pstrain::TASK_TYPE_PS, kUsage, argc, argv,
      [](pstrain::Daemon&) -> absl::StatusOr<std::unique_ptr<pstrain::DaemonComponents>> {
        return std::make_unique<ParameterServerComponents>();
      });
}
