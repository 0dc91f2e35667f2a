#ifndef PSTRAIN_CLIENT_JOB_RUNNER_CLIENT_H_
#define PSTRAIN_CLIENT_JOB_RUNNER_CLIENT_H_

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "protos/job.pb.h"

namespace pstrain {

// Submits `spec` to the coordinator at `coordinator_address`, prints the
// job's progress, checkpoints and evaluations to `out` as they happen, and
// returns the job's final status once it has ended.
// InvalidArgument: the spec was refused (the message names the field).
// DeadlineExceeded: the job did not end within `deadline`. Otherwise the
// error of the call that failed (Unavailable: the coordinator went away).
// A Ctrl-C (SIGINT) or SIGTERM while it runs stops the job gracefully (its
// final checkpoint is saved) and keeps following it to its end; the caller
// must have blocked those signals (BlockShutdownSignals).
absl::StatusOr<JobStatus> RunJobAndFollow(const std::string& coordinator_address,
                                          const JobSpec& spec, absl::Duration deadline,
                                          std::ostream& out);

// The final status as a person reads it: state, reason, step, metrics.
std::string FormatFinalStatus(const JobStatus& status);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_JOB_RUNNER_CLIENT_H_
