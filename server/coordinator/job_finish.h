#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_FINISH_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_FINISH_H_

// The end of a job (JobPhase::kFinishing, then kEnded), on its Run thread.

#include <string>

#include "server/coordinator/job_parts.h"

namespace pstrain {
namespace coordinator {

// How a job ends.
struct JobOutcome {
  JobState state = JOB_STATE_FAILED;
  std::string message;
};

// After training or evaluation stopped: moves the job to FINISHING with its
// stop reason, lets the workers hear the stop, saves the final checkpoint
// and waits for its evaluation, unless the job diverged, its checkpoints
// kept failing or a user stopped it immediately. Returns how it ends.
JobOutcome FinishJob(JobParts& parts);

// Frees the cluster (kEnded): closes the checkpoint feed, sends members
// back to idle and drops the job from its shards.
void ReleaseJob(JobParts& parts);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_FINISH_H_
