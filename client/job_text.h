#ifndef PSTRAIN_CLIENT_JOB_TEXT_H_
#define PSTRAIN_CLIENT_JOB_TEXT_H_

// What the commands print for people: a job's status, the job list and the
// cluster's members.

#include <string>

#include "absl/time/time.h"
#include "google/protobuf/map.h"
#include "protos/coordinator.pb.h"
#include "protos/job.pb.h"

namespace pstrain {

// "accuracy 0.8699  loss 0.3536", sorted by name.
std::string FormatMetrics(const google::protobuf::Map<std::string, double>& metrics);

// A checkpoint that could not be saved, one line: "checkpoint at step 600
// failed (1 in a row; the job fails at 3): ps/0: ...: No space left on
// device".
std::string FormatCheckpointFailure(const CheckpointFailure& failure);

// A job that has ended: state, reason, step, final metrics, checkpoints and
// export, a few lines.
std::string FormatFinalStatus(const JobStatus& status);

// `pstrain status JOB`: every field a person looks at, one per line;
// durations taken at `now`.
std::string FormatJobStatus(const JobStatus& status, absl::Time now);

// `pstrain list`: a header and one row per job.
std::string FormatJobTable(const ListJobsResponse& jobs);

// `pstrain cluster`: the running job and queue, then one row per member
// (role, address, incarnation, state, heartbeat age at `now`, step, queue
// depth, health).
std::string FormatClusterTable(const ClusterStatus& cluster, absl::Time now);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_JOB_TEXT_H_
