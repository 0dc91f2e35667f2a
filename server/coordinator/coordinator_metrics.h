#ifndef PSTRAIN_SERVER_COORDINATOR_COORDINATOR_METRICS_H_
#define PSTRAIN_SERVER_COORDINATOR_COORDINATOR_METRICS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
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
  // The running job's global step at `now` (nullopt: no job runs), once a
  // tick; steps/s is its rate over the last kStepRateWindow. A step that
  // goes back (a restore, the next job) starts the window over.
  void ObserveGlobalStep(std::optional<int64_t> global_step, absl::Time now);
  // A job ended: counts it by state and stop reason and makes it the last
  // job (pstrain_coordinator_last_job_info).
  void RecordJobEnd(const JobStatus& job);
  // The newest evaluation of the running job: its checkpoint's step and
  // every metric (a metric the evaluation did not report is dropped).
  void RecordEvaluation(int64_t step, const std::map<std::string, double>& metrics);
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
  // The job rolled back to a checkpoint after losing a parameter server,
  // losing the `steps` trained since it.
  void RecordRollback(int64_t steps);
  // Agreed sync rounds (round_keeper.h): rounds committed on every shard,
  // and joins answered LATE (their pushes not applied, their records
  // trained again).
  void AddSyncRoundsCommitted(int64_t rounds);
  void AddLateRoundJoins(int64_t joins);

  // How far back steps/s looks: long enough to smooth the bursts of
  // progress reports, short enough to show a stall within a scrape or two.
  static constexpr absl::Duration kStepRateWindow = absl::Seconds(10);

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
  prometheus::Counter& rollbacks_;
  prometheus::Counter& rolled_back_steps_;
  prometheus::Counter& sync_rounds_committed_;
  prometheus::Counter& late_round_joins_;
  prometheus::Histogram& checkpoint_seconds_;
  prometheus::Gauge& checkpoint_bytes_;
  prometheus::Gauge& checkpoint_time_;
  prometheus::Gauge& steps_per_sec_;
  prometheus::Family<prometheus::Counter>& jobs_ended_;
  prometheus::Family<prometheus::Gauge>& last_job_;
  prometheus::Gauge& last_eval_step_;
  prometheus::Family<prometheus::Gauge>& last_eval_metric_;

  absl::Mutex mu_;
  // (time, global step) of the ticks within kStepRateWindow, oldest first.
  std::deque<std::pair<absl::Time, int64_t>> recent_steps_ ABSL_GUARDED_BY(mu_);
  // The series of pstrain_coordinator_last_job_info now shown, if any.
  prometheus::Gauge* last_job_series_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::map<std::string, prometheus::Gauge*> eval_series_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_COORDINATOR_METRICS_H_
