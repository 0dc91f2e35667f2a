#include "client/exit_code.h"

namespace pstrain {

ExitCode ExitCodeForStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitSuccess;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
      return kExitUsage;
    case absl::StatusCode::kUnavailable:
      return kExitUnreachable;
    case absl::StatusCode::kResourceExhausted:
      return kExitBusy;
    default:
      return kExitJobFailed;
  }
}

ExitCode ExitCodeForJobState(JobState state) {
  return state == JOB_STATE_FAILED || state == JOB_STATE_STOPPED ? kExitJobFailed : kExitSuccess;
}

}  // namespace pstrain
