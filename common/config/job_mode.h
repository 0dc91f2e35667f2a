#ifndef PSTRAIN_COMMON_CONFIG_JOB_MODE_H_
#define PSTRAIN_COMMON_CONFIG_JOB_MODE_H_

#include "protos/job.pb.h"

namespace pstrain {

// Whether a job in `mode` trains: TRAIN and TRAIN_AND_EVAL, and UNSPECIFIED,
// which means TRAIN_AND_EVAL.
bool JobModeTrains(JobMode mode);

// Whether a job in `mode` runs an evaluator: EVAL, TRAIN_AND_EVAL,
// CONTINUOUS_EVAL, and UNSPECIFIED.
bool JobModeEvaluates(JobMode mode);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_JOB_MODE_H_
