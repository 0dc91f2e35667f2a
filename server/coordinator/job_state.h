#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_STATE_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_STATE_H_

#include "protos/job.pb.h"

namespace pstrain {
namespace coordinator {

// SUCCEEDED, FAILED or STOPPED: the job will not run again.
inline bool IsEnded(JobState state) {
  return state == JOB_STATE_SUCCEEDED || state == JOB_STATE_FAILED || state == JOB_STATE_STOPPED;
}

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_STATE_H_
