#ifndef PSTRAIN_BENCH_CLUSTER_THROUGHPUT_MEASUREMENT_H_
#define PSTRAIN_BENCH_CLUSTER_THROUGHPUT_MEASUREMENT_H_

// The measurements the end-to-end and scaling parts of cluster_bench are
// made of: the single-process trainer on a model, a window of a job on the
// cluster, and the pair of them as a ThroughputPoint.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/cluster_bench_settings.h"
#include "bench/cluster/process_pauser.h"
#include "bench/common/single_process_reference.h"

namespace pstrain {
namespace bench {

// Examples per step in every job of cluster_bench.
constexpr int kBatch = 128;
// Fashion-MNIST's training images.
constexpr int kTrainExamples = 60000;

// The hidden layers of the Fashion-MNIST MLP 784-256-128-10.
const std::vector<int64_t>& FashionMlp();

// A timestamped progress line on stderr: the user sees the run is alive.
void Progress(const std::string& message);

// What a throughput point measured: the cluster window and its reference.
struct ThroughputPoint {
  std::string label;
  std::vector<int64_t> hidden_units;
  int workers = 2;
  ThroughputWindow window;
  std::optional<SingleProcessRun> reference;
  // The runs `reference` is the mean of, when more than one.
  std::vector<SingleProcessRun> reference_runs;
  int shards = 1;
};

// Runs `pstrain train-local` on the MLP with `hidden` layers for
// settings.reference_steps, scaled down by the model's size (at least 5),
// with `compute_threads` (0: the default, one).
absl::StatusOr<SingleProcessRun> MeasureSingleProcess(ClusterBenchSettings& settings,
                                                      const std::vector<int64_t>& hidden,
                                                      int compute_threads = 0);

// Submits a throughput job, measures `window` after the warm-up, stops the
// job. FailedPrecondition: a worker never trained, or the job ended early.
// `train_tfrecord`: as BenchJob's.
absl::StatusOr<ThroughputWindow> MeasureCluster(ClusterBenchSettings& settings,
                                                BenchCluster& cluster,
                                                const std::vector<int64_t>& hidden, bool sync,
                                                absl::Duration window,
                                                const std::string& train_tfrecord = "");

// Submits the job `spec_text` (which runs until stopped), measures `window`
// after the warm-up and stops it; `what` names it in the progress lines.
// `slowing`, when set, cycles its process from the moment every worker has
// trained until the window's end, and has stopped (leaving the process
// running) before the job is stopped, also when the measurement failed.
absl::StatusOr<ThroughputWindow> MeasureClusterJob(ClusterBenchSettings& settings,
                                                   BenchCluster& cluster, const std::string& what,
                                                   const std::string& spec_text,
                                                   absl::Duration window,
                                                   ProcessPauser* slowing = nullptr);

// A local cluster of 1 coordinator, the parameter servers and workers of
// `layout`, 1 evaluator; the workers get `extra_worker_flags` after
// settings.worker_flags, the coordinator `extra_coordinator_flags` after
// settings.coordinator_flags.
absl::StatusOr<std::unique_ptr<BenchCluster>> StartCluster(
    ClusterBenchSettings& settings, const BenchClusterLayout& layout,
    const std::vector<std::string>& extra_worker_flags = {},
    const std::vector<std::string>& extra_coordinator_flags = {});

// The same with `num_ps` unreplicated shards and `workers` workers.
absl::StatusOr<std::unique_ptr<BenchCluster>> StartCluster(
    ClusterBenchSettings& settings, int workers,
    const std::vector<std::string>& extra_worker_flags = {}, int num_ps = 1);

// The mean of two single-process runs, one on each side of a cluster run.
SingleProcessRun Bracketing(const SingleProcessRun& before, const SingleProcessRun& after);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_THROUGHPUT_MEASUREMENT_H_
