#include "common/config/job_mode.h"

namespace pstrain {

bool JobModeTrains(JobMode mode) {
  return mode == JOB_MODE_TRAIN || mode == JOB_MODE_TRAIN_AND_EVAL || mode == JOB_MODE_UNSPECIFIED;
}

bool JobModeEvaluates(JobMode mode) {
  return mode == JOB_MODE_EVAL || mode == JOB_MODE_TRAIN_AND_EVAL ||
         mode == JOB_MODE_CONTINUOUS_EVAL || mode == JOB_MODE_UNSPECIFIED;
}

}  // namespace pstrain
