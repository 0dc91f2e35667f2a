#ifndef PSTRAIN_SERVER_COORDINATOR_COORDINATOR_METRICS_H_
#define PSTRAIN_SERVER_COORDINATOR_COORDINATOR_METRICS_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "protos/cluster.pb.h"
#include "protos/job.pb.h"

namespace pstrain {
namespace coordinator {

// The coordinator's Prometheus metrics (pstrain_coordinator_*). Thread-safe
// (prometheus-cpp metrics are).
class CoordinatorMetrics {
 public:
  // `registry` is borrowed and must outlive the metrics.
  explicit CoordinatorMetrics(prometheus::Registry& registry);

  CoordinatorMetrics(const CoordinatorMetrics&) = delete;
  CoordinatorMetrics& operator=(const CoordinatorMetrics&) = delete;

  // The running job's global step and cluster-wide examples/s (0 when no
  // job runs).
  void SetTraining(int64_t global_step, double examples_per_sec);
  // Jobs by state, over the queue and the history.
  void SetJobCounts(const std::map<JobState, int>& counts);
  void SetQueuedJobs(int queued);
  // Members by role and state, and each live member's heartbeat age.
  void SetMembers(const std::vector<Member>& members, absl::Time now);
  void AddLostMembers(int lost);
  void SetDataLeasesOutstanding(int64_t leases);
  void AddDataLeasesRequeued(int64_t leases);
  // A checkpoint was written in `duration`, `bytes` large, at `when`.
  void RecordCheckpoint(absl::Duration duration, int64_t bytes, absl::Time when);
  void RecordCheckpointFailure();

 private:
  prometheus::Gauge& global_step_;
  prometheus::Gauge& examples_per_sec_;
  prometheus::Family<prometheus::Gauge>& jobs_;
  prometheus::Gauge& queued_jobs_;
  prometheus::Family<prometheus::Gauge>& members_;
  prometheus::Family<prometheus::Gauge>& heartbeat_age_;
  prometheus::Counter& lost_members_;
  prometheus::Gauge& leases_outstanding_;
  prometheus::Counter& leases_requeued_;
  prometheus::Counter& checkpoints_ok_;
  prometheus::Counter& checkpoints_failed_;
  prometheus::Histogram& checkpoint_seconds_;
  prometheus::Gauge& checkpoint_bytes_;
  prometheus::Gauge& checkpoint_time_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_COORDINATOR_METRICS_H_
