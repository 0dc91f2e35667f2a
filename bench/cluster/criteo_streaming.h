#ifndef PSTRAIN_BENCH_CLUSTER_CRITEO_STREAMING_H_
#define PSTRAIN_BENCH_CLUSTER_CRITEO_STREAMING_H_

// cluster_bench's criteo part: wide-and-deep on click logs in Criteo's
// layout, async on the shared cluster (shared memory), the training logs
// held in memory against streamed from the plain file and from the file
// gzipped (as Criteo's are downloaded) through its access points:
// examples/s and the workers' data_wait share of the step (the target:
// under 5%).

#include <cstdint>

#include "absl/status/statusor.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/cluster_bench_settings.h"
#include "bench/report/markdown_report.h"

namespace pstrain {
namespace bench {

struct CriteoStreamingResults {
  int64_t lines = 0;
  int64_t gzip_bytes = 0;
  ThroughputWindow in_memory;  // from the gzipped file
  ThroughputWindow streamed_plain;
  ThroughputWindow streamed_gzip;
};

// Writes the logs under settings.work_dir (make-criteo-logs' generator)
// and measures a window of each job on `cluster`.
absl::StatusOr<CriteoStreamingResults> RunCriteoStreaming(ClusterBenchSettings& settings,
                                                          BenchCluster& cluster);

void AddCriteoSection(const CriteoStreamingResults& results, MarkdownReport& report);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_CRITEO_STREAMING_H_
