#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_FAILOVER_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_FAILOVER_H_

// A job on replicated shards (docs/design/replicas.md) takes the loss of a
// parameter server without a rollback: a lost primary's backup is promoted,
// a lost backup's primary goes on alone, each under the shard's next
// fencing epoch, and the workers take the shards' new primaries from a
// republished assignment. A shard that loses both replicas rolls the job
// back as an unreplicated one does.

#include <vector>

#include "absl/status/status.h"
#include "server/coordinator/job_parts.h"
#include "server/coordinator/started_job.h"
#include "server/coordinator/training_generation.h"

namespace pstrain {
namespace coordinator {

// Fails each shard of `lost` over to its other replica. A replica that is
// not in its shard's chain any more is ignored; a shard left without a
// replica, or whose other replica cannot take over, marks the run lost
// (TrainingGeneration::MarkLost), naming the shard and both replicas, for
// the rollback that follows. Never fails the job itself.
void FailOver(JobParts& parts, const StartedJob& job, const std::vector<LostReplica>& lost);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_FAILOVER_H_
