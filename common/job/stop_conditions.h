#ifndef PSTRAIN_COMMON_JOB_STOP_CONDITIONS_H_
#define PSTRAIN_COMMON_JOB_STOP_CONDITIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "protos/job.pb.h"
#include "common/clock/clock.h"

namespace pstrain {

// Why a job's training ends, for the job's status and for people.
struct StopDecision {
  StopReason reason = STOP_REASON_UNSPECIFIED;
  // "reached max_steps 3000", "loss is NaN at step 1234", ...
  std::string message;
  // The global step when it was decided.
  int64_t global_step = 0;
};

// The best value of eval.best_metric so far and the checkpoint it came from.
struct BestMetric {
  double value = 0;
  int64_t step = 0;
};

// What one evaluation meant.
struct EvalOutcome {
  // It beat every earlier evaluation on eval.best_metric (strictly, by any
  // amount): its checkpoint is the new best, to be exported.
  bool is_best = false;
  // Whether it counted: only an evaluation of a newer checkpoint than every
  // earlier one moves the best or the early-stopping count (an evaluator
  // that restarted may evaluate a checkpoint again).
  bool counted = false;
  // The job's stop decision, made by this evaluation or before.
  std::optional<StopDecision> stop;
};

// Decides when a training job stops, from its StopSpec and EvalSpec: the
// first condition met (max_steps, max_seconds, a NaN or infinite loss, the
// target metric, early stopping, or an outside reason such as a user's stop)
// is the decision, and it stands. Thread-safe.
//
// Early stopping follows Keras: an evaluation improves when it beats the
// value of the last improvement by more than min_delta in the metric's
// direction; after early_stopping_patience evaluations without one,
// training stops. The best metric, which picks the exported checkpoint,
// moves on any strict improvement.
class StopConditions {
 public:
  // `spec` as PrepareJobSpec filled it. Training time counts from `start`.
  StopConditions(const JobSpec& spec, Clock& clock, absl::Time start);

  StopConditions(const StopConditions&) = delete;
  StopConditions& operator=(const StopConditions&) = delete;

  // A progress report: the global step now and the mean training loss since
  // the previous report (nullopt when the report carried no steps). Checks
  // the loss, max_steps and max_seconds. Returns the job's stop decision,
  // made now or before.
  std::optional<StopDecision> OnProgress(int64_t global_step, std::optional<double> loss);

  // Checks max_seconds alone, so that a job whose workers stalled still ends
  // on time. Returns the decision, made now or before.
  std::optional<StopDecision> CheckTime(int64_t global_step);

  // An evaluation of the checkpoint at `step` with its metric values.
  // Updates the best metric and early stopping, checks the target.
  // InvalidArgument: `metrics` lacks eval.best_metric (nothing changes).
  absl::StatusOr<EvalOutcome> OnEval(int64_t step, const std::map<std::string, double>& metrics);

  // A decision from outside the conditions (a user's stop, the end of the
  // data, an error). Returns the decision that stands: this one, or an
  // earlier one.
  StopDecision Decide(StopReason reason, std::string message, int64_t global_step);

  std::optional<StopDecision> decision() const;
  std::optional<BestMetric> best() const;

  const std::string& best_metric() const { return metric_; }
  MetricDirection direction() const { return direction_; }

 private:
  // Whether `a` is better than `b` by more than `delta`.
  bool Better(double a, double b, double delta) const;
  void DecideLocked(StopReason reason, std::string message, int64_t global_step)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CheckTimeLocked(int64_t global_step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  Clock& clock_;
  const StopSpec stop_;
  const std::string metric_;
  const MetricDirection direction_;  // never UNSPECIFIED
  const absl::Time start_;

  mutable absl::Mutex mu_;
  std::optional<StopDecision> decision_ ABSL_GUARDED_BY(mu_);
  std::optional<BestMetric> best_ ABSL_GUARDED_BY(mu_);
  // Early stopping: the value of the last improvement and the evaluations
  // since.
  std::optional<double> reference_ ABSL_GUARDED_BY(mu_);
  int evaluations_without_improvement_ ABSL_GUARDED_BY(mu_) = 0;
  // The newest checkpoint step evaluated.
  std::optional<int64_t> last_eval_step_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_JOB_STOP_CONDITIONS_H_
