#include "common/job/stop_conditions.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec_defaults.h"

namespace pstrain {
StopConditions::StopConditions(const JobSpec& spec, Clock& clock, absl::Time start)
    : clock_(clock),
      stop_(spec.stop()),
      metric_(BestMetricOf(spec.eval())),
      direction_(BestDirectionOf(spec.eval())),
      start_(start) {}

bool StopConditions::Better(double a, double b, double delta) const {
  // NaN compares false both ways, so a NaN value is never better.
  return direction_ == METRIC_DIRECTION_MAXIMIZE ? a > b + delta : a < b - delta;
}

void StopConditions::DecideLocked(StopReason reason, std::string message, int64_t global_step) {
  if (decision_.has_value()) return;
  decision_ = StopDecision{reason, std::move(message), global_step};
}

void StopConditions::CheckTimeLocked(int64_t global_step) {
  if (stop_.max_seconds() <= 0) return;
  const absl::Duration elapsed = clock_.Now() - start_;
  if (elapsed >= absl::Seconds(stop_.max_seconds())) {
    DecideLocked(
        STOP_REASON_MAX_SECONDS,
        absl::StrCat("reached max_seconds ", stop_.max_seconds(), " at step ", global_step),
        global_step);
  }
}

std::optional<StopDecision> StopConditions::OnProgress(int64_t global_step,
                                                       std::optional<double> loss) {
  absl::MutexLock lock(&mu_);
  // The first condition met wins; a diverged loss is checked first because
  // it is the one a person must act on.
  const bool nan_stops = !stop_.has_stop_on_nan_loss() || stop_.stop_on_nan_loss();
  if (nan_stops && loss.has_value() && !std::isfinite(*loss)) {
    const std::string what = std::isnan(*loss) ? "NaN" : (*loss > 0 ? "inf" : "-inf");
    DecideLocked(STOP_REASON_NAN_LOSS, absl::StrCat("loss is ", what, " at step ", global_step),
                 global_step);
  }
  if (stop_.max_steps() > 0 && global_step >= stop_.max_steps()) {
    DecideLocked(STOP_REASON_MAX_STEPS, absl::StrCat("reached max_steps ", stop_.max_steps()),
                 global_step);
  }
  CheckTimeLocked(global_step);
  return decision_;
}

std::optional<StopDecision> StopConditions::CheckTime(int64_t global_step) {
  absl::MutexLock lock(&mu_);
  CheckTimeLocked(global_step);
  return decision_;
}

absl::StatusOr<EvalOutcome> StopConditions::OnEval(int64_t step,
                                                   const std::map<std::string, double>& metrics) {
  auto it = metrics.find(metric_);
  if (it == metrics.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the evaluation of step ", step, " lacks the best metric '", metric_, "'"));
  }
  const double value = it->second;

  absl::MutexLock lock(&mu_);
  EvalOutcome outcome;
  if (last_eval_step_.has_value() && step <= *last_eval_step_) {
    outcome.stop = decision_;
    return outcome;
  }
  outcome.counted = true;
  last_eval_step_ = step;

  if (!best_.has_value() ? !std::isnan(value) : Better(value, best_->value, 0)) {
    best_ = BestMetric{value, step};
    outcome.is_best = true;
  }

  if (stop_.has_target_metric_value()) {
    const double target = stop_.target_metric_value();
    if (MeetsTarget(direction_, value, target)) {
      DecideLocked(
          STOP_REASON_TARGET_METRIC,
          absl::StrCat(metric_, " ", value, " reached the target ", target, " at step ", step),
          step);
    }
  }

  if (stop_.early_stopping_patience() > 0) {
    const bool improved = !std::isnan(value) && (!reference_.has_value() ||
                                                 Better(value, *reference_, stop_.min_delta()));
    if (improved) {
      reference_ = value;
      evaluations_without_improvement_ = 0;
    } else {
      ++evaluations_without_improvement_;
    }
    if (evaluations_without_improvement_ >= stop_.early_stopping_patience()) {
      DecideLocked(
          STOP_REASON_EARLY_STOPPING,
          absl::StrCat("no improvement of ", metric_, " by more than ", stop_.min_delta(), " in ",
                       stop_.early_stopping_patience(), " evaluations (best ",
                       best_.has_value() ? absl::StrCat(best_->value, " at step ", best_->step)
                                         : std::string("none"),
                       ")"),
          step);
    }
  }
  outcome.stop = decision_;
  return outcome;
}

StopDecision StopConditions::Decide(StopReason reason, std::string message, int64_t global_step) {
  absl::MutexLock lock(&mu_);
  DecideLocked(reason, std::move(message), global_step);
  return *decision_;
}

std::optional<StopDecision> StopConditions::decision() const {
  absl::MutexLock lock(&mu_);
  return decision_;
}

std::optional<BestMetric> StopConditions::best() const {
  absl::MutexLock lock(&mu_);
  return best_;
}

}  // namespace pstrain
