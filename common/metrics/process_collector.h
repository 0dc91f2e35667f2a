#ifndef PSTRAIN_COMMON_METRICS_PROCESS_COLLECTOR_H_
#define PSTRAIN_COMMON_METRICS_PROCESS_COLLECTOR_H_

#include <string>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace pstrain {

// The standard process metrics, named as every Prometheus client library
// and exporter names them (process_cpu_seconds_total,
// process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds, process_max_fds), so
// dashboards and alerts written for other services work on pstrain too.
// prometheus-cpp 1.0 has no such collector. Values are read from /proc at
// each scrape; when they cannot be read the families are left out rather
// than reported as zeros. Thread-safe.
class ProcessCollector : public prometheus::Collectable {
 public:
  // `proc_root`: where /proc is mounted (tests pass a fake tree).
  explicit ProcessCollector(std::string proc_root = "/proc");

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::string proc_root_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_METRICS_PROCESS_COLLECTOR_H_
