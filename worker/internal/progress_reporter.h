#ifndef PSTRAIN_WORKER_INTERNAL_PROGRESS_REPORTER_H_
#define PSTRAIN_WORKER_INTERNAL_PROGRESS_REPORTER_H_

// What one assignment run tells the coordinator of its training: the steps,
// examples, applied updates and mean loss since the last report, every
// steps_per_loop steps (sooner near max_steps), and what the answers say
// back (the global step, and whether to stop).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/clock/clock.h"
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

  // Books a computed step: its examples, its loss and the parameter
  // versions it was computed from.
  void CountStep(int64_t examples, double loss, const std::vector<int64_t>& versions);
  // Books a push the shards applied (one update toward the global step).
  void CountApplied() { ++applied_; }
  // Every round below `version` is complete (deterministic sync mode, where
  // the coordinator counts the global step by it).
  void NoteVersion(int64_t version);

  // Reports when the steps since the last report are due: steps_per_loop
  // of them, or fewer near max_steps.
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
  int64_t steps_ = 0, examples_ = 0, applied_ = 0;
  double loss_sum_ = 0;
  absl::Time last_report_;
  int64_t newest_version_ = 0;
  // The global step in the coordinator's last answer.
  int64_t known_global_step_ = 0;
  bool training_over_ = false;
};

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_PROGRESS_REPORTER_H_
