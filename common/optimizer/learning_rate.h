#ifndef PSTRAIN_COMMON_OPTIMIZER_LEARNING_RATE_H_
#define PSTRAIN_COMMON_OPTIMIZER_LEARNING_RATE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "protos/job.pb.h"

namespace pstrain {

// The learning rate as a function of the number of updates applied so far,
// from an OptimizerSpec's learning_rate and schedule, for the parameter
// servers and the single-process trainer alike:
//   constant     base
//   step         base * factor^floor(s / step_size)
//   exponential  base * rate^(s / decay_steps), the exponent floored when
//                staircase
//   cosine       base * ((1 - alpha) * (1 + cos(pi * min(s, D) / D)) / 2 + alpha)
// With warmup_steps W > 0 the rate rises linearly from 0 at s = 0 to the
// schedule's initial value at s = W, and the schedule runs from there:
// lr(s) = sched(0) * s / W for s < W, sched(s - W) after.
// Immutable and thread-safe.
class LearningRate {
 public:
  // `spec`'s defaults are filled and its rules checked by
  // PrepareOptimizerSpec (common/config), as at submit. InvalidArgument
  // naming each field at fault: learning_rate <= 0 or not finite, decay
  // steps <= 0, a factor or rate outside (0, 1], alpha outside [0, 1],
  // warmup_steps < 0.
  static absl::StatusOr<LearningRate> Create(const OptimizerSpec& spec);

  // The rate of update number `step` (0-based; a negative step counts as
  // 0), computed in double. Updates use it rounded to float
  // (UpdateStep::learning_rate).
  double At(int64_t step) const;

 private:
  LearningRate(const LearningRateSchedule& schedule, double base)
      : schedule_(schedule), base_(base) {}
  double Scheduled(int64_t step) const;

  LearningRateSchedule schedule_;  // defaults filled in
  double base_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_OPTIMIZER_LEARNING_RATE_H_
