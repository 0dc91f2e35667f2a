#ifndef PSTRAIN_BENCH_CLUSTER_REPLICA_COST_H_
#define PSTRAIN_BENCH_CLUSTER_REPLICA_COST_H_

// cluster_bench's replicas part: what a hot-standby backup of each shard
// (--ps_replicas=1, docs/design/replicas.md) costs and what it buys. The
// e2e part's async job on 1 shard and 2 workers without and with a backup,
// on shared memory and on gRPC bytes; then one job after another on a
// replicated cluster, each losing its primary to SIGKILL, timed from the
// kill to training again.

#include "absl/status/statusor.h"
#include "bench/cluster/cluster_bench_settings.h"
#include "bench/cluster/replica_figures.h"

namespace pstrain {
namespace bench {

// Runs the four throughput windows (a cluster each) and the kills (one
// cluster). FailedPrecondition: a job ended early or never trained, or a
// killed job did not fail over exactly once without a rollback.
absl::StatusOr<ReplicaResults> RunReplicas(ClusterBenchSettings& settings);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_REPLICA_COST_H_
