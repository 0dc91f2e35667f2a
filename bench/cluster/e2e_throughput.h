#ifndef PSTRAIN_BENCH_CLUSTER_E2E_THROUGHPUT_H_
#define PSTRAIN_BENCH_CLUSTER_E2E_THROUGHPUT_H_

// cluster_bench's end-to-end part: examples/s of 1 ps + 2 workers, async
// and sync, on the Fashion-MNIST MLP 784-256-128-10, against the
// single-process trainer, and each worker's step-time breakdown.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/cluster_bench_settings.h"
#include "bench/cluster/throughput_measurement.h"
#include "bench/report/markdown_report.h"

namespace pstrain {
namespace bench {

struct E2eResults {
  ThroughputPoint async_run;
  ThroughputPoint sync_run;
  // The single-process run before the async run's cluster window.
  SingleProcessRun fashion_reference;
};

// Each cluster run is bracketed by single-process runs (before and after,
// the one between the async and sync runs shared): other work on a shared
// machine moves absolute figures within a minute.
absl::StatusOr<E2eResults> RunE2eThroughput(ClusterBenchSettings& settings, BenchCluster& cluster);

// The throughput table and targets, then the step-time breakdown (naming
// the chart at `svg_path` when not empty).
void AddE2eSections(const E2eResults& results, const std::string& svg_path, MarkdownReport& report);

// The step-time breakdown as an SVG chart; `window` is the e2e window.
std::string BreakdownSvg(const E2eResults& results, absl::Duration window);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_E2E_THROUGHPUT_H_
