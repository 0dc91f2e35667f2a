#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_TRAINING_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_TRAINING_H_

// The training phase of a job (JobPhase::kTraining), on its Run thread.

#include "absl/status/status.h"
#include "server/coordinator/job_parts.h"

namespace pstrain {
namespace coordinator {

// While workers train: checks the stop conditions that do not wait for a
// report (max_seconds, the end of the data, a user's stop), takes the
// checkpoints the schedule asks for, applies max_to_keep, and rolls every
// shard back when one was lost (job_rollback.h). Returns OK once a stop is
// decided; an error when the job must fail (Aborted: the coordinator shuts
// down).
absl::Status TrainJob(JobParts& parts);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_TRAINING_H_
