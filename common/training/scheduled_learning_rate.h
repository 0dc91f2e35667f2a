#ifndef PSTRAIN_COMMON_TRAINING_SCHEDULED_LEARNING_RATE_H_
#define PSTRAIN_COMMON_TRAINING_SCHEDULED_LEARNING_RATE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "protos/job.pb.h"

namespace pstrain {

// The learning rate as a function of the number of updates applied so far,
// from an OptimizerSpec's learning_rate and schedule, as the parameter
// servers define it:
//   constant     base
//   step         base * factor^floor(s / step_size)
//   exponential  base * rate^(s / decay_steps), the exponent floored when
//                staircase
//   cosine       base * ((1 - alpha) * (1 + cos(pi * min(s, D) / D)) / 2 + alpha)
// With warmup_steps W > 0 the rate rises linearly from 0 at s = 0 to the
// schedule's initial value at s = W, and the schedule runs from there:
// lr(s) = sched(0) * s / W for s < W, sched(s - W) after.
// Immutable and thread-safe.
class ScheduledLearningRate {
 public:
  // Unset fields take their documented defaults (learning_rate 0.01, factor
  // 0.1, rate 0.96). InvalidArgument naming the field: learning_rate <= 0,
  // decay steps <= 0, a factor or rate outside (0, 1], alpha outside
  // [0, 1], warmup_steps < 0.
  static absl::StatusOr<ScheduledLearningRate> Create(const OptimizerSpec& spec);

  double At(int64_t step) const;

 private:
  ScheduledLearningRate(const LearningRateSchedule& schedule, double base)
      : schedule_(schedule), base_(base) {}
  double Scheduled(int64_t step) const;

  LearningRateSchedule schedule_;  // defaults filled in
  double base_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_TRAINING_SCHEDULED_LEARNING_RATE_H_
