#include "server/ps/learning_rate.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace pstrain {

absl::StatusOr<LearningRate> LearningRate::Create(const OptimizerSpec& spec) {
  LearningRate lr(spec);
  lr.base_ = spec.has_learning_rate() ? spec.learning_rate() : 0.01;
  if (!(lr.base_ > 0) || !std::isfinite(lr.base_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer.learning_rate must be > 0, got ", lr.base_));
  }
  LearningRateSchedule& s = *lr.spec_.mutable_schedule();
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
  return lr;
}

double LearningRate::Scheduled(int64_t step) const {
  const LearningRateSchedule& s = spec_.schedule();
  switch (s.kind_case()) {
    case LearningRateSchedule::kStep:
      return base_ * std::pow(static_cast<double>(s.step().factor()),
                              static_cast<double>(step / s.step().step_size()));
    case LearningRateSchedule::kExponential: {
      double p = static_cast<double>(step) / static_cast<double>(s.exponential().decay_steps());
      if (s.exponential().staircase()) p = std::floor(p);
      return base_ * std::pow(static_cast<double>(s.exponential().rate()), p);
    }
    case LearningRateSchedule::kCosine: {
      const double d = static_cast<double>(s.cosine().decay_steps());
      const double t = std::min(static_cast<double>(step), d) / d;
      const double alpha = s.cosine().alpha();
      return base_ * ((1 - alpha) * 0.5 * (1 + std::cos(M_PI * t)) + alpha);
    }
    case LearningRateSchedule::KIND_NOT_SET:
      break;
  }
  return base_;
}

float LearningRate::At(int64_t step) const {
  if (step < 0) step = 0;
  const int64_t warmup = spec_.schedule().warmup_steps();
  if (step < warmup) {
    return static_cast<float>(Scheduled(0) * static_cast<double>(step) /
                              static_cast<double>(warmup));
  }
  return static_cast<float>(Scheduled(step - warmup));
}

}  // namespace pstrain
