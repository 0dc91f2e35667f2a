#ifndef PSTRAIN_BENCH_CLUSTER_E2E_THROUGHPUT_H_
#define PSTRAIN_BENCH_CLUSTER_E2E_THROUGHPUT_H_

// cluster_bench's end-to-end part: examples/s of 1 ps + 2 workers, async
// and sync, on the Fashion-MNIST MLP 784-256-128-10, against the
// single-process trainer, and each worker's step-time breakdown; on both
// data paths: shared-memory lanes (what `pstrain local` uses) and tensor
// bytes in the gRPC messages (as between hosts); and with the training data
// streamed from TFRecord rather than held in memory.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/cluster_bench_settings.h"
#include "bench/cluster/throughput_measurement.h"
#include "bench/report/markdown_report.h"

namespace pstrain {
namespace bench {

// One data path's runs.
struct E2ePath {
  std::string name;  // "shm", "grpc"
  ThroughputPoint async_run;
  ThroughputPoint sync_run;
};

struct E2eResults {
  // Shared memory first: the targets are read on it.
  std::vector<E2ePath> paths;
  // The single-process run before the first cluster window.
  SingleProcessRun fashion_reference;
  // The single process with training.compute_threads: 2, both cores for
  // one trainer (the fair use of this machine), mean of a run before the
  // first cluster window and one after the last.
  SingleProcessRun two_thread_reference;
  std::vector<SingleProcessRun> two_thread_runs;
  // Async on shared memory again, the training data streamed from a
  // TFRecord file of the same images (READ_MODE_STREAMED), right after the
  // shared-memory runs, whose async run it is compared with.
  std::optional<ThroughputPoint> streamed_run;
};

// Measures the shared-memory path on `cluster` (started with lanes on, the
// default) and the gRPC path on a cluster of its own whose workers run
// with --shm=false. Each cluster run is bracketed by single-process runs
// (before and after, each shared with the next run): other work on a
// shared machine moves absolute figures within a minute.
absl::StatusOr<E2eResults> RunE2eThroughput(ClusterBenchSettings& settings, BenchCluster& cluster);

// The throughput table and targets, then the step-time breakdown (naming
// the chart at `svg_path` when not empty).
void AddE2eSections(const E2eResults& results, const std::string& svg_path, MarkdownReport& report);

// The step-time breakdown as an SVG chart; `window` is the e2e window.
std::string BreakdownSvg(const E2eResults& results, absl::Duration window);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_E2E_THROUGHPUT_H_
