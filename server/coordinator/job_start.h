#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_START_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_START_H_

// The start phase of a job (JobPhase::kStarting), on its Run thread.

#include "absl/status/status.h"
#include "server/coordinator/job_parts.h"
#include "server/coordinator/start_point.h"
#include "server/coordinator/started_job.h"

namespace pstrain {
namespace coordinator {

// Waits for the job's members (saying what it waits for in the job's
// reason and the log), plans the job, places and creates its variables on
// the parameter servers, resumes from model_dir or warm-starts, makes its
// ledgers, moves it to kTraining with them (JobControl::Start) and hands
// out assignments. Cancelled: a user stopped the job while it waited;
// Aborted: the coordinator shuts down.
absl::Status StartJob(JobParts& parts);

// Creates the job's variables on every shard for the current generation
// (empty: a rollback's fresh start).
absl::Status CreateVariables(JobParts& parts, const StartedJob& job);
// What CreateVariables asks of the process of shard `shard` in role
// `replica` (none: no replicas).
CreateVariablesRequest ShardVariablesRequest(const JobParts& parts, const StartedJob& job,
                                             int shard, const ReplicaSetup& replica);

// Hands every member of the job its assignment for the current generation,
// starting at `start`. Last: a member that has its assignment may call at
// once.
void PublishAssignments(JobParts& parts, const StartedJob& job, const StartPoint& start);

// Hands every member the job's current assignment again with the shards'
// primaries now and the next Assignment.replica_epoch: a shard failed over
// to its backup within the generation.
void RepublishShards(JobParts& parts, const StartedJob& job);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_START_H_
