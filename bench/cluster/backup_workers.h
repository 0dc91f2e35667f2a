#ifndef PSTRAIN_BENCH_CLUSTER_BACKUP_WORKERS_H_
#define PSTRAIN_BENCH_CLUSTER_BACKUP_WORKERS_H_

// cluster_bench's backup part: do backup workers earn their keep? The sync
// job of the e2e part (the Fashion-MNIST MLP 784-256-128-10) four times, on
// settings.backup_ps parameter servers: 2 workers with every worker in each
// round, undisturbed and with worker/1 slowed (SIGSTOP/SIGCONT cycles); then
// 3 workers with replicas_to_aggregate 2 (one backup), the same two ways.
// What counts is the rate of applied updates: a slowed worker holds up
// every round it is needed in, and a backup lets the round close without it.

#include "absl/status/statusor.h"
#include "bench/cluster/backup_figures.h"
#include "bench/cluster/cluster_bench_settings.h"

namespace pstrain {
namespace bench {

// Runs the four windows, each cluster started for its pair and stopped
// after it. FailedPrecondition: a job ended early or a worker never
// trained (a cluster that refuses backup workers on several parameter
// servers fails its job at start, and says so).
absl::StatusOr<BackupResults> RunBackupWorkers(ClusterBenchSettings& settings);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_BACKUP_WORKERS_H_
