#ifndef PSTRAIN_COMMON_JOB_CHECKPOINT_KIND_H_
#define PSTRAIN_COMMON_JOB_CHECKPOINT_KIND_H_

namespace pstrain {

// Which checkpoint of a job: one the schedule asked for while training, or
// the final one, taken when training ends. A MANIFEST marked final tells
// evaluators that training is over, and an evaluation of it exports the
// final model.
enum class CheckpointKind {
  kPeriodic,
  kFinal,
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_JOB_CHECKPOINT_KIND_H_
