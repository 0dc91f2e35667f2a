#ifndef PSTRAIN_SERVER_PS_LEARNING_RATE_H_
#define PSTRAIN_SERVER_PS_LEARNING_RATE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "protos/job.pb.h"

namespace pstrain {

// The learning rate as a function of the update count, from an
// OptimizerSpec's learning_rate and schedule. Immutable and thread-safe.
//
// With warmup_steps W > 0 the rate rises linearly from 0 at step 0 to the
// schedule's initial value at step W, and the schedule runs from there:
// lr(s) = sched(0) * s / W for s < W, sched(s - W) after.
class LearningRate {
 public:
  // InvalidArgument naming the field: a non-positive learning_rate, a
  // decay with steps <= 0, a factor or rate outside (0, 1], an alpha
  // outside [0, 1], negative warm-up.
  static absl::StatusOr<LearningRate> Create(const OptimizerSpec& spec);

  float At(int64_t step) const;

 private:
  explicit LearningRate(const OptimizerSpec& spec) : spec_(spec) {}
  double Scheduled(int64_t step) const;

  OptimizerSpec spec_;  // defaults filled in
  double base_ = 0.01;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_LEARNING_RATE_H_
