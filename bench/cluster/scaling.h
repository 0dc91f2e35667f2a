#ifndef PSTRAIN_BENCH_CLUSTER_SCALING_H_
#define PSTRAIN_BENCH_CLUSTER_SCALING_H_

// cluster_bench's scaling part: examples/s, async, as the model grows
// (about 1M..64M parameters, on 1 ps + 2 workers) and as the workers grow
// (1, 2, 4, 8, a new cluster each), against the single-process trainer.

#include <vector>

#include "absl/status/status.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/cluster_bench_settings.h"
#include "bench/cluster/throughput_measurement.h"
#include "bench/report/markdown_report.h"

namespace pstrain {
namespace bench {

struct ScalingResults {
  std::vector<ThroughputPoint> model_sweep;   // by settings.model_sizes
  std::vector<ThroughputPoint> worker_sweep;  // by settings.worker_counts
};

// One point per settings.model_sizes on `cluster`, each after its own
// single-process reference.
absl::Status RunModelSweep(ClusterBenchSettings& settings, BenchCluster& cluster,
                           ScalingResults& results);

// One point per settings.worker_counts, each on a new cluster, after one
// single-process reference.
absl::Status RunWorkerSweep(ClusterBenchSettings& settings, ScalingResults& results);

// A table for each sweep that ran.
void AddScalingSections(const ScalingResults& results, MarkdownReport& report);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_SCALING_H_
