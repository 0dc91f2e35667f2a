#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_ROLLBACK_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_ROLLBACK_H_

// A lost parameter server costs the steps since the newest checkpoint, not
// the job: training pauses (JobPhase::kRollingBack), the shard comes back
// (restarted by whoever runs the cluster), every shard starts a new
// generation from that checkpoint, and workers take up new assignments.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/coordinator/job_parts.h"
#include "server/coordinator/start_point.h"
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

// Restores the shards and the ledgers to the newest good checkpoint (fresh
// variables without one), in the training generation already set: the
// global step, the data position and the sync rounds go back to the
// checkpoint's. With `sync_slots`, the data and the rounds are dealt to
// that many worker slots from there (job_resize.h). Returns where training
// resumes.
absl::StatusOr<StartPoint> RestoreNewestCheckpoint(JobParts& parts, const StartedJob& job,
                                                   std::optional<int> sync_slots = std::nullopt);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_ROLLBACK_H_
