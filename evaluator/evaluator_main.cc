// pstrain-evaluator: the evaluator of a pstrain cluster.

#include "common/daemon/daemon_main.h"

namespace {

constexpr char kUsage[] =
    "pstrain-evaluator: the evaluator of a pstrain cluster. It follows checkpoint\n"
    "notifications, evaluates each new checkpoint (throttled, always the final one),\n"
    "reports metrics and exports the best model.\n"
    "\n"
    "Usage: pstrain-evaluator --coordinator_address=HOST:PORT [--task_index=N] "
    "[--listen=HOST:PORT]\n"
    "   or: TF_CONFIG='{\"cluster\": {...}, \"task\": {...}}' pstrain-evaluator\n"
    "Flags win over TF_CONFIG (as TensorFlow and Kubeflow's TFJob set it).\n"
    "\n"
    "An evaluator serves no API of its own: its gRPC server answers health checks (for\n"
    "Kubernetes probes) and reflection, and it serves Prometheus metrics on /metrics.\n"
    "Exits 0 on SIGTERM or SIGINT (--shutdown_grace_secs).";

// An evaluator calls the coordinator; it serves nothing beyond health and
// metrics.
class EvaluatorComponents : public pstrain::DaemonComponents {
 public:
  std::vector<grpc::Service*> services() override { return {}; }
};

}  // namespace

int main(int argc, char** argv) {
  return pstrain::RunDaemonMain(
      pstrain::TASK_TYPE_EVALUATOR, kUsage, argc, argv,
      [](pstrain::Daemon&) -> absl::StatusOr<std::unique_ptr<pstrain::DaemonComponents>> {
        return std::make_unique<EvaluatorComponents>();
      });
}
