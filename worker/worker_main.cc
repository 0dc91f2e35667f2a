// pstrain-worker: a training worker of a pstrain cluster.

#include "common/daemon/daemon_main.h"

namespace {

constexpr char kUsage[] =
    "pstrain-worker: a training worker of a pstrain cluster. It reads the data it is\n"
    "leased, pulls parameters, runs forward and backward passes, pushes gradients and\n"
    "reports progress.\n"
    "\n"
    "Usage: pstrain-worker --coordinator_address=HOST:PORT [--task_index=N] [--listen=HOST:PORT]\n"
    "   or: TF_CONFIG='{\"cluster\": {...}, \"task\": {...}}' pstrain-worker\n"
    "Flags win over TF_CONFIG (as TensorFlow and Kubeflow's TFJob set it).\n"
    "\n"
    "A worker serves no API of its own: its gRPC server answers health checks (for\n"
    "Kubernetes probes) and reflection, and it serves Prometheus metrics on /metrics.\n"
    "Exits 0 on SIGTERM or SIGINT (--shutdown_grace_secs).";

// A worker calls the coordinator and the parameter servers; it serves
// nothing beyond health and metrics.
class WorkerComponents : public pstrain::DaemonComponents {
 public:
  std::vector<grpc::Service*> services() override { return {}; }
};

}  // namespace

int main(int argc, char** argv) {
  return pstrain::RunDaemonMain(
      pstrain::TASK_TYPE_WORKER, kUsage, argc, argv,
      [](pstrain::Daemon&) -> absl::StatusOr<std::unique_ptr<pstrain::DaemonComponents>> {
        return std::make_unique<WorkerComponents>();
      });
}
