#ifndef PSTRAIN_BENCH_COMMON_METRICS_SCRAPE_H_
#define PSTRAIN_BENCH_COMMON_METRICS_SCRAPE_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/common/metrics_page.h"
#include "client/local_cluster.h"

namespace pstrain {
namespace bench {

// GET /metrics of one process of a local cluster, parsed.
// Unavailable: no answer within `timeout` (the process is gone or stuck).
// Internal: the page is not the Prometheus text format (the message names
// the task and the line).
absl::StatusOr<MetricsPage> ScrapeMetrics(const LocalTask& task, absl::Duration timeout);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMMON_METRICS_SCRAPE_H_
