#ifndef PSTRAIN_WORKER_INTERNAL_PROGRESS_REPORTER_H_
#define PSTRAIN_WORKER_INTERNAL_PROGRESS_REPORTER_H_

// What one assignment run tells the coordinator of its training: the steps,
// examples and mean loss since the last report and the global step seen,
// every steps_per_loop steps, and what the answers say back (whether to
// stop).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/clock/interval_gate.h"
#include "protos/coordinator.pb.h"
#include "worker/coordinator_client.h"
#include "worker/worker_metrics.h"

namespace pstrain {
namespace worker {
namespace internal {

// Not thread-safe: the run's compute thread only.
class ProgressReporter {
 public:
  // `coordinator`, `assignment`, `clock` and `metrics` (may be null) are
  // borrowed and must outlive the reporter.
  ProgressReporter(CoordinatorClient& coordinator, const Assignment& assignment,
                   int64_t steps_per_loop, Clock& clock, WorkerMetrics* metrics);

  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // Books a computed step: its examples and its loss.
  void CountStep(int64_t examples, double loss);
  // The most updates a shard has applied, as this run saw in its answers:
  // the coordinator raises the global step to it.
  void NoteVersion(int64_t version);

  // Reports when steps_per_loop steps ran since the last report.
  void ReportIfDue();
  // Reports the steps since the last report, if any.
  void ReportAnySteps();
  // Reports whatever ran since the last report, possibly nothing; an
  // answer that says the job is over for this worker ends training.
  void Report();

  // Training of this run is over: an answer said stop (or the job ended),
  // or the run found it over (EndTraining).
  bool training_over() const { return training_over_; }
  void EndTraining() { training_over_ = true; }

 private:
  // Constant after construction.
  CoordinatorClient& coordinator_;
  const Assignment& assignment_;
  const int64_t steps_per_loop_;
  Clock& clock_;
  WorkerMetrics* const metrics_;

  // Since the last report.
  int64_t steps_ = 0, examples_ = 0;
  double loss_sum_ = 0;
  absl::Time last_report_;
  int64_t newest_version_ = 0;
  bool training_over_ = false;
  // The worker's progress line in its log (`kubectl logs` of a worker).
  IntervalGate progress_log_{clock_, absl::Seconds(30)};
};

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_PROGRESS_REPORTER_H_
