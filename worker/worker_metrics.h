#ifndef PSTRAIN_WORKER_WORKER_METRICS_H_
#define PSTRAIN_WORKER_WORKER_METRICS_H_

#include <cstdint>

#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace pstrain {
namespace worker {

// The worker's Prometheus metrics, all named pstrain_worker_*. Registered
// in the registry given at construction (the daemon's), which must outlive
// this object. Thread-safe.
class WorkerMetrics {
 public:
  explicit WorkerMetrics(prometheus::Registry& registry);

  WorkerMetrics(const WorkerMetrics&) = delete;
  WorkerMetrics& operator=(const WorkerMetrics&) = delete;

  void RecordPush(int64_t bytes, absl::Duration latency);
  void RecordPull(int64_t bytes, absl::Duration latency);
  void RecordStalePush() { stale_pushes_.Increment(); }
  void RecordRetry() { retries_.Increment(); }
  void RecordStep(int64_t examples, absl::Duration compute);
  void RecordReturnedRecords(int64_t records) { returned_records_.Increment(records); }
  // At each progress report: the mean loss and throughput since the last.
  void SetLoop(double loss, double examples_per_sec);
  void SetBusy(bool busy) { busy_.Set(busy ? 1 : 0); }

 private:
  prometheus::Counter& steps_;
  prometheus::Counter& examples_;
  prometheus::Gauge& examples_per_sec_;
  prometheus::Gauge& loss_;
  prometheus::Histogram& compute_seconds_;
  prometheus::Counter& push_bytes_;
  prometheus::Histogram& push_latency_;
  prometheus::Counter& pull_bytes_;
  prometheus::Histogram& pull_latency_;
  prometheus::Counter& stale_pushes_;
  prometheus::Counter& retries_;
  prometheus::Counter& returned_records_;
  prometheus::Gauge& busy_;
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_WORKER_METRICS_H_
