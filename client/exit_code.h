#ifndef PSTRAIN_CLIENT_EXIT_CODE_H_
#define PSTRAIN_CLIENT_EXIT_CODE_H_

// The exit codes of every `pstrain` command, so scripts can tell a failed
// job from a typo from a cluster that is not there.

#include "absl/status/status.h"
#include "protos/job.pb.h"

namespace pstrain {

enum ExitCode : int {
  kExitSuccess = 0,
  // The job failed or was stopped; or a process of `pstrain local` died.
  kExitJobFailed = 1,
  // Bad usage, an invalid job spec (the message names the field), or a job
  // id the cluster does not know.
  kExitUsage = 2,
  // The coordinator cannot be reached.
  kExitUnreachable = 3,
  // The coordinator is out of room for now (its queue is full): the same
  // command may succeed later, unlike an invalid spec.
  kExitBusy = 4,
};

// The exit code for an error of a command: InvalidArgument and NotFound are
// the caller's mistake (kExitUsage; a job over the cluster's per-job limits
// is InvalidArgument), Unavailable is kExitUnreachable, ResourceExhausted
// (a full queue) is kExitBusy, anything else kExitJobFailed. OK is
// kExitSuccess.
ExitCode ExitCodeForStatus(const absl::Status& status);

// kExitJobFailed for a job that ended FAILED or STOPPED, else kExitSuccess
// (queued, running and succeeded jobs).
ExitCode ExitCodeForJobState(JobState state);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_EXIT_CODE_H_
