#ifndef PSTRAIN_CLIENT_EXIT_CODE_H_
#define PSTRAIN_CLIENT_EXIT_CODE_H_

// The exit codes of every `pstrain` command, so scripts can tell a failed
// job from a typo, a cluster that is not there, a refused token and a wait
// that ran out. kExitCodeTable documents them once: `pstrain --help` prints
// it and docs/cli.md repeats it.

#include <string>

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
  // The coordinator cannot be reached, or did not answer in time.
  kExitUnreachable = 3,
  // The coordinator is out of room for now (its queue is full): the same
  // command may succeed later, unlike an invalid spec.
  kExitBusy = 4,
  // The coordinator refused the caller: a missing or wrong token.
  kExitAuthRefused = 5,
  // `watch --watch_timeout_secs` or `local --job_timeout_secs` ran out while
  // the job still ran.
  kExitGaveUpWaiting = 6,
  // The cluster refused the request in its present state (`shutdown` while
  // a job runs).
  kExitWrongState = 7,
  // Anything else went wrong inside the client or the cluster; the message
  // says what.
  kExitInternal = 8,
};

// "  0  success\n  1  the job failed ...\n": every code, one per line, as
// `pstrain --help` shows them.
std::string ExitCodeTable();

// The exit code for an error of a command. OK is kExitSuccess;
// InvalidArgument, NotFound and AlreadyExists are the caller's mistake
// (kExitUsage; a job over the cluster's per-job limits is InvalidArgument);
// Unavailable and DeadlineExceeded (an RPC's deadline) are
// kExitUnreachable; ResourceExhausted (a full queue) is kExitBusy;
// Unauthenticated and PermissionDenied are kExitAuthRefused;
// FailedPrecondition is kExitWrongState; anything else kExitInternal.
ExitCode ExitCodeForStatus(const absl::Status& status);

// For the end of a wait on a job (`watch`, `local`): DeadlineExceeded is the
// wait's own limit running out (kExitGaveUpWaiting), anything else as
// ExitCodeForStatus.
ExitCode ExitCodeForWait(const absl::Status& status);

// kExitJobFailed for a job that ended FAILED or STOPPED, else kExitSuccess
// (queued, running and succeeded jobs).
ExitCode ExitCodeForJobState(JobState state);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_EXIT_CODE_H_
