#ifndef PSTRAIN_BENCH_CLUSTER_SCALING_H_
#define PSTRAIN_BENCH_CLUSTER_SCALING_H_

// cluster_bench's scaling part: examples/s, async, as the model grows
// (about 1M..64M parameters, on 1 ps + 2 workers), as the workers grow
// (1, 2, 4, 8, a new cluster each) and as the shards grow (1, 2, 4 with 2
// workers, a new cluster each), against the single-process trainer; and
// the sizing model's predictions (sizing_model.h) beside the worker and
// shard sweeps, from the costs of the Fashion-MNIST MLP's step measured
// piece by piece in the same run.

#include <map>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/cluster_bench_settings.h"
#include "bench/cluster/throughput_measurement.h"
#include "bench/ps/wire_probe.h"
#include "bench/report/markdown_report.h"

namespace pstrain {
namespace bench {

struct ScalingResults {
  std::vector<ThroughputPoint> model_sweep;   // by settings.model_sizes
  std::vector<ThroughputPoint> worker_sweep;  // by settings.worker_counts
  std::vector<ThroughputPoint> shard_sweep;   // by settings.shard_counts
  // The MLP's push and pull through shared-memory lanes (as the local
  // cluster moves them), by shard count.
  std::map<int, WireResult> exchanges;
  // The same over gRPC (as between hosts), 1 shard.
  std::optional<WireResult> grpc_exchange;
};

// One point per settings.model_sizes on `cluster`, each after its own
// single-process reference.
absl::Status RunModelSweep(ClusterBenchSettings& settings, BenchCluster& cluster,
                           ScalingResults& results);

// One point per settings.worker_counts, each on a new cluster, after one
// single-process reference.
absl::Status RunWorkerSweep(ClusterBenchSettings& settings, ScalingResults& results);

// One point per settings.shard_counts, 2 workers, each on a new cluster,
// after one single-process reference.
absl::Status RunShardSweep(ClusterBenchSettings& settings, ScalingResults& results);

// The MLP's push and pull by one worker to 1 shard and to each of
// settings.shard_counts through lanes, and to 1 shard over gRPC, in this
// process (no cluster may be running).
void ProbeExchanges(const ClusterBenchSettings& settings, ScalingResults& results);

// A table for each sweep that ran.
void AddScalingSections(const ScalingResults& results, MarkdownReport& report);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_SCALING_H_
