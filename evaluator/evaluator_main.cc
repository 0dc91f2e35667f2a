// pstrain-evaluator: the evaluator of a pstrain cluster.

#include <cstdint>
#include <memory>

#include "absl/random/random.h"
#include "absl/time/time.h"
#include "common/checkpoint/posix_env.h"
#include "common/clock/clock.h"
#include "common/daemon/daemon_main.h"
#include "common/net/channel_security.h"
#include "evaluator/evaluation_loop.h"
#include "evaluator/evaluator_metrics.h"
#include "gflags/gflags.h"

DEFINE_double(continuous_eval_timeout_secs, 0,
              "continuous_eval jobs: give up (reporting NO_NEW_CHECKPOINT) after this long "
              "without a new checkpoint in model_dir. 0: wait until a final checkpoint, "
              "stop.max_steps, or the coordinator moves on.");
DEFINE_double(model_dir_poll_secs, 5, "continuous_eval jobs: how often model_dir is listed.");
DEFINE_double(coordinator_timeout_secs, 10, "Deadline of each call to the coordinator.");
DEFINE_double(coordinator_retry_secs, 300,
              "How long a call to the coordinator is retried while it is unavailable.");

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
    "Kubernetes probes) and reflection, and it serves Prometheus metrics\n"
    "(pstrain_evaluator_*) on /metrics. Exits 0 on SIGTERM or SIGINT\n"
    "(--shutdown_grace_secs), or when the coordinator shuts the cluster down.";

absl::Duration Seconds(double secs) { return absl::Seconds(secs); }

// The evaluation loop and what it needs. It calls the coordinator; it serves
// nothing beyond health and metrics. The loop starts once the daemon
// serves, so that it registers with its real metrics address (a port picked
// at start is known only then).
class EvaluatorComponents : public pstrain::DaemonComponents {
 public:
  EvaluatorComponents(pstrain::Daemon& daemon, uint64_t incarnation)
      : incarnation_(incarnation), metrics_(*daemon.registry()) {}

  ~EvaluatorComponents() override { OnShutdown(); }

  std::vector<grpc::Service*> services() override { return {}; }

  absl::Status OnServing(pstrain::Daemon& daemon) override {
    const pstrain::DaemonOptions& options = daemon.options();
    loop_ = std::make_unique<pstrain::evaluator::EvaluationLoop>(
        pstrain::CreateSecureChannel(options.cluster.coordinator_address,
                                     options.channel_security),
        env_, clock_, metrics_, LoopOptions(daemon, incarnation_));
    loop_->Start();
    return absl::OkStatus();
  }

  // Stops the loop (an evaluation in progress finishes first) before the
  // server stops.
  void OnShutdown() override {
    if (loop_ != nullptr) loop_->Stop();
  }

 private:
  static pstrain::evaluator::EvaluationLoopOptions LoopOptions(pstrain::Daemon& daemon,
                                                               uint64_t incarnation) {
    const pstrain::DaemonOptions& options = daemon.options();
    pstrain::evaluator::EvaluationLoopOptions loop;
    loop.task = options.cluster.task;
    loop.incarnation = incarnation;
    loop.address = options.cluster.own_address;
    loop.metrics_address = daemon.metrics_address();
    loop.coordinator_address = options.cluster.coordinator_address;
    loop.call_timeout = Seconds(FLAGS_coordinator_timeout_secs);
    loop.retry.deadline = Seconds(FLAGS_coordinator_retry_secs);
    loop.model_dir_poll_interval = Seconds(FLAGS_model_dir_poll_secs);
    if (FLAGS_continuous_eval_timeout_secs > 0) {
      loop.continuous_eval_timeout = Seconds(FLAGS_continuous_eval_timeout_secs);
    }
    loop.on_shutdown = [&daemon](int exit_code) { daemon.RequestShutdown(exit_code); };
    loop.on_membership = [&daemon](bool member) { daemon.SetReady(member); };
    return loop;
  }

  const uint64_t incarnation_;
  pstrain::PosixEnv env_;
  pstrain::RealClock clock_;
  pstrain::evaluator::EvaluatorMetrics metrics_;
  std::unique_ptr<pstrain::evaluator::EvaluationLoop> loop_;  // set once serving
};

}  // namespace

int main(int argc, char** argv) {
  return pstrain::RunDaemonMain(
      pstrain::TASK_TYPE_EVALUATOR, kUsage, argc, argv,
      [](pstrain::Daemon& daemon) -> absl::StatusOr<std::unique_ptr<pstrain::DaemonComponents>> {
        if (!(FLAGS_model_dir_poll_secs > 0) || !(FLAGS_coordinator_timeout_secs > 0) ||
            !(FLAGS_coordinator_retry_secs > 0) || !(FLAGS_continuous_eval_timeout_secs >= 0)) {
          return absl::InvalidArgumentError(
              "--model_dir_poll_secs, --coordinator_timeout_secs and --coordinator_retry_secs "
              "must be > 0, --continuous_eval_timeout_secs >= 0");
        }
        absl::BitGen random;
        const uint64_t incarnation =
            absl::Uniform<uint64_t>(absl::IntervalClosed, random, 1, UINT64_MAX);
        return std::make_unique<EvaluatorComponents>(daemon, incarnation);
      });
}
