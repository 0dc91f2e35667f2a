// pstrain-worker: a training worker of a pstrain cluster.

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/daemon/daemon.h"
#include "common/daemon/daemon_main.h"
#include "gflags/gflags.h"
#include "worker/worker_process.h"

DEFINE_int32(ps_streams_per_shard, 2,
             "Streams (connections) to each parameter server; pushes and pulls of more than "
             "--ps_parallel_min_kb for one shard are split over them.");
DEFINE_int32(ps_parallel_min_kb, 4096,
             "Smallest per-shard push or pull, in KiB, that is split over several streams.");
DEFINE_int32(ps_chunk_kb, 1024,
             "Tensor bytes per message to the parameter servers, in KiB; at most a quarter of "
             "--max_message_mb (rows of a sparse push carry their ids besides).");
DEFINE_double(ps_call_timeout_secs, 60,
              "Deadline of one attempt of a push or pull; a late one is retried with the same "
              "push id.");
DEFINE_bool(shm, true,
            "Talk to parameter servers on this host (and network namespace) through "
            "shared-memory lanes: tensor bytes (dense values, embedding rows) move through "
            "memory shared with the shard, pushes and pulls through the lane's Unix socket "
            "instead of gRPC; a shard elsewhere or with lanes off gets everything over gRPC "
            "(logged once, counted in pstrain_worker_lane_fallbacks_total). false: always "
            "gRPC.");
DEFINE_bool(overlap_pull_with_push, true,
            "Pull the next batch's parameters while the current gradients are pushed. Async "
            "modes: the pull misses that push, one more step of staleness. Sync rounds one "
            "shard decides: the pull waits on the shard for the push's round, a round trip "
            "sooner. Not with rounds agreed over several shards.");
DEFINE_int32(lease_ahead_batches, 16,
             "Streamed training data: when the data lease in hand has this many batches left, "
             "take the next lease and read its first blocks in the background, so that its first "
             "batch does not wait for them. 0: take each lease when the one before ends.");

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
    "Kubernetes probes) and reflection, and it serves Prometheus metrics\n"
    "(pstrain_worker_*) on /metrics. Exits 0 on SIGTERM or SIGINT\n"
    "(--shutdown_grace_secs), or when the coordinator shuts the cluster down.";

// A worker calls the coordinator and the parameter servers; it serves
// nothing beyond health and metrics. Its training starts once the daemon
// serves, so that it registers with its real metrics address (a port
// picked at start is known only then), and runs on the process's own
// thread until shutdown begins.
class WorkerComponents : public pstrain::DaemonComponents {
 public:
  explicit WorkerComponents(pstrain::worker::WorkerProcessOptions options)
      : options_(std::move(options)) {}
  std::vector<grpc::Service*> services() override { return {}; }

  absl::Status OnServing(pstrain::Daemon& daemon) override {
    options_.task = daemon.options().cluster.task;
    options_.coordinator_address = daemon.options().cluster.coordinator_address;
    options_.address = daemon.options().cluster.own_address;
    options_.metrics_address = daemon.metrics_address();
    options_.security = daemon.options().channel_security;
    options_.coordinator.on_membership = [&daemon](bool member) { daemon.SetReady(member); };
    absl::StatusOr<std::unique_ptr<pstrain::worker::WorkerProcess>> process =
        pstrain::worker::WorkerProcess::Start(
            options_, *daemon.registry(),
            [&daemon](int exit_code) { daemon.RequestShutdown(exit_code); });
    if (!process.ok()) return process.status();
    process_ = *std::move(process);
    return absl::OkStatus();
  }

  // Stops training (handing back the lease) before the server stops.
  void OnShutdown() override { process_.reset(); }

 private:
  pstrain::worker::WorkerProcessOptions options_;
  std::unique_ptr<pstrain::worker::WorkerProcess> process_;
};

}  // namespace

int main(int argc, char** argv) {
  return pstrain::RunDaemonMain(
      pstrain::TASK_TYPE_WORKER, kUsage, argc, argv,
      [](pstrain::Daemon& daemon) -> absl::StatusOr<std::unique_ptr<pstrain::DaemonComponents>> {
        // A sparse push of chunk_bytes of rows of width 1 carries up to 2.5
        // times as many bytes of ids: a quarter of the limit always fits.
        const int64_t max_message_kb = daemon.options().grpc.max_message_bytes >> 10;
        if (FLAGS_ps_chunk_kb < 1 || int64_t{FLAGS_ps_chunk_kb} * 4 > max_message_kb) {
          return absl::InvalidArgumentError(
              absl::StrCat("--ps_chunk_kb must be in [1, ", max_message_kb / 4,
                           "] (a quarter of --max_message_mb), got ", FLAGS_ps_chunk_kb));
        }
        if (FLAGS_lease_ahead_batches < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("--lease_ahead_batches must be >= 0, got ", FLAGS_lease_ahead_batches));
        }
        pstrain::worker::WorkerProcessOptions options;
        options.loop.ps.streams_per_shard = FLAGS_ps_streams_per_shard;
        options.loop.ps.parallel_min_bytes = int64_t{FLAGS_ps_parallel_min_kb} << 10;
        options.loop.ps.chunk_bytes = int64_t{FLAGS_ps_chunk_kb} << 10;
        options.loop.ps.call_timeout = absl::Seconds(FLAGS_ps_call_timeout_secs);
        options.loop.ps.shared_memory = FLAGS_shm;
        options.loop.overlap_pull_with_push = FLAGS_overlap_pull_with_push;
        options.loop.lease_ahead_batches = FLAGS_lease_ahead_batches;
        return std::make_unique<WorkerComponents>(std::move(options));
      });
}
