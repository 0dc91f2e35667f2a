#include "common/metrics/process_collector.h"

#include <utility>

#include "absl/status/statusor.h"
#include "common/metrics/process_stats.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type,
                                double value) {
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return prometheus::MetricFamily{std::move(name), std::move(help), type, {metric}};
}

}  // namespace

ProcessCollector::ProcessCollector(std::string proc_root) : proc_root_(std::move(proc_root)) {}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  const absl::StatusOr<ProcessStats> stats = ReadProcessStats(proc_root_);
  if (!stats.ok()) {
    // A scrape must not fail over this; an absent series is what alerts on
    // these metrics can tell from a real value.
    LOG_EVERY_N(WARNING, 100) << "process metrics left out: " << stats.status();
    return {};
  }
  using prometheus::MetricType;
  return {
      Family("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
             MetricType::Counter, stats->cpu_seconds),
      Family("process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
             static_cast<double>(stats->resident_bytes)),
      Family("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge,
             static_cast<double>(stats->virtual_bytes)),
      Family("process_start_time_seconds",
             "Start time of the process since unix epoch in seconds.", MetricType::Gauge,
             stats->start_time_seconds),
      Family("process_open_fds", "Number of open file descriptors.", MetricType::Gauge,
             static_cast<double>(stats->open_fds)),
      Family("process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge,
             stats->max_fds),
  };
}

}  // namespace pstrain
