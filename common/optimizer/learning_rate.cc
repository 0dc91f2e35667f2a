#include "common/optimizer/learning_rate.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace pstrain {

absl::StatusOr<LearningRate> LearningRate::Create(const OptimizerSpec& spec) {
  const double base = spec.has_learning_rate() ? spec.learning_rate() : 0.01;
  if (!(base > 0) || !std::isfinite(base)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer.learning_rate must be > 0, got ", base));
  }
  LearningRateSchedule s = spec.schedule();
  if (s.warmup_steps() < 0) {
    return absl::InvalidArgumentError("optimizer.schedule.warmup_steps must be >= 0");
  }
  switch (s.kind_case()) {
    case LearningRateSchedule::kStep:
      if (s.step().step_size() <= 0) {
        return absl::InvalidArgumentError("optimizer.schedule.step.step_size must be > 0");
      }
      if (s.step().factor() == 0) s.mutable_step()->set_factor(0.1f);
      if (!(s.step().factor() > 0 && s.step().factor() <= 1)) {
        return absl::InvalidArgumentError("optimizer.schedule.step.factor must be in (0, 1]");
      }
      break;
    case LearningRateSchedule::kExponential:
      if (s.exponential().decay_steps() <= 0) {
        return absl::InvalidArgumentError("optimizer.schedule.exponential.decay_steps must be > 0");
      }
      if (s.exponential().rate() == 0) s.mutable_exponential()->set_rate(0.96f);
      if (!(s.exponential().rate() > 0 && s.exponential().rate() <= 1)) {
        return absl::InvalidArgumentError("optimizer.schedule.exponential.rate must be in (0, 1]");
      }
      break;
    case LearningRateSchedule::kCosine:
      if (s.cosine().decay_steps() <= 0) {
        return absl::InvalidArgumentError("optimizer.schedule.cosine.decay_steps must be > 0");
      }
      if (!(s.cosine().alpha() >= 0 && s.cosine().alpha() <= 1)) {
        return absl::InvalidArgumentError("optimizer.schedule.cosine.alpha must be in [0, 1]");
      }
      break;
    case LearningRateSchedule::KIND_NOT_SET:
      break;
  }
  return LearningRate(s, base);
}

double LearningRate::Scheduled(int64_t step) const {
  switch (schedule_.kind_case()) {
    case LearningRateSchedule::kStep:
      return base_ * std::pow(static_cast<double>(schedule_.step().factor()),
                              static_cast<double>(step / schedule_.step().step_size()));
    case LearningRateSchedule::kExponential: {
      double exponent =
          static_cast<double>(step) / static_cast<double>(schedule_.exponential().decay_steps());
      if (schedule_.exponential().staircase()) exponent = std::floor(exponent);
      return base_ * std::pow(static_cast<double>(schedule_.exponential().rate()), exponent);
    }
    case LearningRateSchedule::kCosine: {
      const double d = static_cast<double>(schedule_.cosine().decay_steps());
      const double t = std::min(static_cast<double>(step), d) / d;
      const double alpha = schedule_.cosine().alpha();
      return base_ * ((1 - alpha) * 0.5 * (1 + std::cos(M_PI * t)) + alpha);
    }
    case LearningRateSchedule::KIND_NOT_SET:
      break;
  }
  return base_;
}

double LearningRate::At(int64_t step) const {
  step = std::max<int64_t>(step, 0);
  const int64_t warmup = schedule_.warmup_steps();
  if (step < warmup) return Scheduled(0) * static_cast<double>(step) / static_cast<double>(warmup);
  return Scheduled(step - warmup);
}

}  // namespace pstrain
