#ifndef PSTRAIN_WORKER_WORKER_METRICS_H_
#define PSTRAIN_WORKER_WORKER_METRICS_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace pstrain {
namespace worker {

// Where a training step's time goes; the phases of one step add up to
// about its wall time (a push overlapped with the next pull shows up as
// the wait for it, kPushWait).
enum class StepPhase {
  kDataWait,  // reading and batching the leased records
  kPull,      // pulling the parameters the batch needs
  kCompute,   // the forward and backward pass
  kPushWait,  // waiting for the previous step's push to be decided
};

// The worker's Prometheus metrics, all named pstrain_worker_*. Registered
// in the registry given at construction (the daemon's), which must outlive
// this object. Thread-safe.
class WorkerMetrics {
 public:
  explicit WorkerMetrics(prometheus::Registry& registry);

  WorkerMetrics(const WorkerMetrics&) = delete;
  WorkerMetrics& operator=(const WorkerMetrics&) = delete;

  // One push or pull to every shard, retries included.
  void RecordPush(int64_t bytes, absl::Duration latency);
  void RecordPull(int64_t bytes, absl::Duration latency);
  // A call attempted again, or a wait asked again; cause: "pull_unavailable",
  // "push_unavailable" (a parameter server did not answer), "no_free_lease"
  // (every data range was leased out).
  void RecordRetry(absl::string_view cause);
  // A stream to a shard that keeps its tensor bytes in gRPC messages
  // because no shared-memory lane could be opened; reason: the status
  // code ("FAILED_PRECONDITION": another host or lanes off;
  // "UNIMPLEMENTED": an older shard; "UNAVAILABLE": its socket failed).
  void RecordLaneFallback(absl::string_view reason);
  // A batch whose records went back to the coordinator untrained; cause:
  // "stale_push" (refused as too old), "push_failed".
  void RecordRequeuedBatch(absl::string_view cause);
  void RecordStep(int64_t examples);
  void RecordPhase(StepPhase phase, absl::Duration duration);
  void RecordReturnedRecords(int64_t records) { returned_records_.Increment(records); }
  // At each progress report: the mean loss and throughput since the last.
  void SetLoop(double loss, double examples_per_sec);
  void SetBusy(bool busy) { busy_.Set(busy ? 1 : 0); }

 private:
  prometheus::Counter& steps_;
  prometheus::Counter& examples_;
  prometheus::Gauge& examples_per_sec_;
  prometheus::Gauge& loss_;
  prometheus::Histogram& data_wait_seconds_;
  prometheus::Histogram& pull_seconds_;
  prometheus::Histogram& compute_seconds_;
  prometheus::Histogram& push_wait_seconds_;
  prometheus::Counter& push_bytes_;
  prometheus::Histogram& push_latency_;
  prometheus::Counter& pull_bytes_;
  prometheus::Histogram& pull_latency_;
  prometheus::Family<prometheus::Counter>& retries_;
  prometheus::Family<prometheus::Counter>& lane_fallbacks_;
  prometheus::Family<prometheus::Counter>& requeued_batches_;
  prometheus::Counter& returned_records_;
  prometheus::Gauge& busy_;
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_WORKER_METRICS_H_
