#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_ROLLBACK_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_ROLLBACK_H_

// A lost parameter server costs the steps since the newest checkpoint, not
// the job: training pauses (JobPhase::kRollingBack), the shard comes back
// (restarted by whoever runs the cluster), every shard starts a new
// generation from that checkpoint, and workers take up new assignments.

#include <string>

#include "absl/status/status.h"
#include "server/coordinator/job_parts.h"
#include "server/coordinator/started_job.h"

namespace pstrain {
namespace coordinator {

// Waits for every parameter server of the job to be live again at the
// address the job placed its variables on, then starts a new generation on
// all of them from the newest good checkpoint (fresh variables without
// one): the global step and the data position go back to the
// checkpoint's, and workers get new assignments. `why`: the loss that
// caused it. Cancelled: a user stopped the job meanwhile (then without a
// final checkpoint: the shards disagree).
absl::Status RollBack(JobParts& parts, const StartedJob& job, const std::string& why);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_ROLLBACK_H_
