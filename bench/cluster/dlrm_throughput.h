#ifndef PSTRAIN_BENCH_CLUSTER_DLRM_THROUGHPUT_H_
#define PSTRAIN_BENCH_CLUSTER_DLRM_THROUGHPUT_H_

// cluster_bench's dlrm part: the built-in DLRM at the reference's Criteo
// Kaggle sizes (examples/criteo_dlrm.pbtxt's model) on click logs in
// Criteo's layout, async on the shared cluster, against the single-process
// trainer on the same spec: the logs held in memory, and streamed from the
// gzipped file; and the same network brought from PyTorch as an ONNX graph
// (examples/onnx/dlrm.onnx), its tables dynamic, against the built-in one
// (the target: 0.9x). examples/s and the workers' data_wait share.

#include <cstdint>

#include "absl/status/statusor.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/cluster_bench_settings.h"
#include "bench/common/single_process_reference.h"
#include "bench/report/markdown_report.h"

namespace pstrain {
namespace bench {

struct DlrmResults {
  int64_t lines = 0;
  SingleProcessRun single_process;  // the built-in DLRM, in memory
  ThroughputWindow built_in;        // in memory
  ThroughputWindow built_in_streamed;
  ThroughputWindow imported;  // in memory
};

// Writes the logs under settings.work_dir (make-criteo-logs' generator),
// runs the single-process trainer and measures a window of each job on
// `cluster`.
absl::StatusOr<DlrmResults> RunDlrmThroughput(ClusterBenchSettings& settings,
                                              BenchCluster& cluster);

void AddDlrmSection(const DlrmResults& results, MarkdownReport& report);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_DLRM_THROUGHPUT_H_
