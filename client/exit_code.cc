#include "client/exit_code.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace pstrain {
namespace {

struct ExitCodeMeaning {
  ExitCode code;
  const char* meaning;
};

constexpr ExitCodeMeaning kExitCodeMeanings[] = {
    {kExitSuccess, "success"},
    {kExitJobFailed,
     "the job failed or was stopped, a process of `pstrain local` died, or the command's "
     "own work failed (a file it could not read or write)"},
    {kExitUsage,
     "bad usage, an invalid job spec (or one over the cluster's per-job limits), or an "
     "unknown job id"},
    {kExitUnreachable, "the coordinator cannot be reached, or did not answer in time"},
    {kExitBusy, "the coordinator's queue is full: the same command may succeed later"},
    {kExitAuthRefused, "refused: the coordinator did not accept the token (--client_token_file)"},
    {kExitGaveUpWaiting,
     "gave up waiting: --watch_timeout_secs (watch) or --job_timeout_secs (local) ran out "
     "while the job still ran"},
    {kExitWrongState,
     "the cluster refused the request in its present state (e.g. shutdown while a job "
     "runs)"},
    {kExitInternal, "an internal error of the client or the cluster (the message says what)"},
};

}  // namespace

std::string ExitCodeTable() {
  // Wrapped to 80 columns, each meaning indented past its code.
  constexpr size_t kWidth = 80;
  const std::string indent(5, ' ');
  std::string table;
  for (const ExitCodeMeaning& row : kExitCodeMeanings) {
    std::string line = absl::StrFormat("  %d ", row.code);
    for (absl::string_view word : absl::StrSplit(row.meaning, ' ')) {
      if (line.size() + 1 + word.size() > kWidth && line.size() > indent.size()) {
        absl::StrAppend(&table, line, "\n");
        line = indent.substr(0, indent.size() - 1);
      }
      absl::StrAppend(&line, " ", word);
    }
    absl::StrAppend(&table, line, "\n");
  }
  return table;
}

ExitCode ExitCodeForStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitSuccess;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kAlreadyExists:
      return kExitUsage;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnreachable;
    case absl::StatusCode::kResourceExhausted:
      return kExitBusy;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitAuthRefused;
    case absl::StatusCode::kFailedPrecondition:
      return kExitWrongState;
    default:
      return kExitInternal;
  }
}

ExitCode ExitCodeForWait(const absl::Status& status) {
  return absl::IsDeadlineExceeded(status) ? kExitGaveUpWaiting : ExitCodeForStatus(status);
}

ExitCode ExitCodeForJobState(JobState state) {
  return state == JOB_STATE_FAILED || state == JOB_STATE_STOPPED ? kExitJobFailed : kExitSuccess;
}

}  // namespace pstrain
