#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_RESIZE_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_RESIZE_H_

// A sync job whose rounds have a slot per worker (replicas_to_aggregate 0)
// deals its data to worker slots by round; its workers change at a round
// boundary (docs/design/elastic_workers.md). As a StatefulSet scales, the
// top ranks change: a worker that registers right above the job's ranks
// adds a slot, and a top rank that left on purpose (SIGTERM: Leave) takes
// one away. A worker killed keeps its slot for the process that takes the
// rank up, and a rank below the top that leaves keeps its slot too.

#include <optional>

#include "absl/status/status.h"
#include "server/coordinator/job_parts.h"
#include "server/coordinator/started_job.h"

namespace pstrain {
namespace coordinator {

// The slot count a job of sync slots should move to: fewer by the top ranks
// that left, or more by the live workers right above its top rank; nullopt
// when it stays (and for other jobs).
std::optional<int> WantedSlotCount(const JobParts& parts, const StartedJob& job);

// Deals the job's rounds again for `count` worker slots at a round boundary:
// the open round is void, a checkpoint is taken of what every shard
// applied, a new training generation restores it (the newest good one, if
// this one failed: then the steps since are trained again, as after a
// rollback) and deals each remaining slot the rest of its leases and the
// new slots the next records from that round, and the workers of [0, count)
// get new assignments. Cancelled: a user stopped the job meanwhile.
absl::Status ResizeSlots(JobParts& parts, const StartedJob& job, int count);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_RESIZE_H_
