#include "common/optimizer/learning_rate.h"

#include <algorithm>
#include <cmath>

#include "common/config/job_spec.h"
#include "common/status/status_macros.h"

namespace pstrain {

absl::StatusOr<LearningRate> LearningRate::Create(const OptimizerSpec& raw) {
  ASSIGN_OR_RETURN(const OptimizerSpec spec, PrepareOptimizerSpec(raw));
  return LearningRate(spec.schedule(), spec.learning_rate());
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
