#ifndef PSTRAIN_BENCH_CLUSTER_TIME_TO_ACCURACY_H_
#define PSTRAIN_BENCH_CLUSTER_TIME_TO_ACCURACY_H_

// cluster_bench's accuracy part: wall time from submit to the evaluation
// reaching the target test accuracy (88% by default), async, 1 ps + 2
// workers, on a cluster already running.

#include "absl/status/statusor.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/cluster_bench_settings.h"
#include "bench/report/markdown_report.h"

namespace pstrain {
namespace bench {

// Submits the accuracy job and follows it to the target or
// settings.accuracy_timeout. DeadlineExceeded: the target was not reached
// in time (the job is stopped).
absl::StatusOr<TargetRun> RunTimeToAccuracy(ClusterBenchSettings& settings, BenchCluster& cluster);

// The run's table, its accuracy curve and the target line.
void AddAccuracySection(const TargetRun& run, const ClusterBenchSettings& settings,
                        MarkdownReport& report);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_TIME_TO_ACCURACY_H_
