#include "server/coordinator/job_phase.h"

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"

namespace pstrain {
namespace coordinator {
namespace {

absl::Status Starting(absl::string_view job_id) {
  return WithReason(absl::UnavailableError(absl::StrCat(
                        "job ", job_id,
                        " is still starting (waiting for members or setting up variables); "
                        "try again")),
                    ERROR_REASON_JOB_STARTING);
}

absl::Status RollingBack(absl::string_view job_id) {
  return WithReason(
      absl::FailedPreconditionError(absl::StrCat(
          "job ", job_id,
          " is rolling back to a checkpoint (a parameter server was lost); this run is "
          "over: wait for the job's new assignment")),
      ERROR_REASON_RUN_ROLLED_BACK);
}

absl::Status Ended(absl::string_view job_id) {
  return WithReason(absl::FailedPreconditionError(absl::StrCat("job ", job_id, " has ended; stop")),
                    ERROR_REASON_JOB_ENDED);
}

// Calls that belong to one run of the training: void once it rolls back.
bool BelongsToTheRun(JobCall call) {
  return call == JobCall::kReportProgress || call == JobCall::kAcquireDataLease ||
         call == JobCall::kCompleteDataLease || call == JobCall::kJoinRound;
}

}  // namespace

absl::string_view JobPhaseName(JobPhase phase) {
  switch (phase) {
    case JobPhase::kStarting:
      return "starting";
    case JobPhase::kTraining:
      return "training";
    case JobPhase::kRollingBack:
      return "rolling back";
    case JobPhase::kFinishing:
      return "finishing";
    case JobPhase::kEnded:
      return "ended";
  }
  return "unknown";
}

absl::string_view JobCallName(JobCall call) {
  switch (call) {
    case JobCall::kReportProgress:
      return "ReportProgress";
    case JobCall::kAcquireDataLease:
      return "AcquireDataLease";
    case JobCall::kCompleteDataLease:
      return "CompleteDataLease";
    case JobCall::kReportEval:
      return "ReportEval";
    case JobCall::kWatchCheckpoints:
      return "WatchCheckpoints";
    case JobCall::kReleaseCheckpoint:
      return "ReleaseCheckpoint";
    case JobCall::kJoinRound:
      return "JoinRound";
  }
  return "unknown";
}

bool CanMove(JobPhase from, JobPhase to) {
  if (to == JobPhase::kEnded) return from != JobPhase::kEnded;
  switch (from) {
    case JobPhase::kStarting:
      return to == JobPhase::kTraining || to == JobPhase::kFinishing;
    case JobPhase::kTraining:
      return to == JobPhase::kRollingBack || to == JobPhase::kFinishing;
    case JobPhase::kRollingBack:
      return to == JobPhase::kTraining || to == JobPhase::kFinishing;
    case JobPhase::kFinishing:
    case JobPhase::kEnded:
      return false;
  }
  return false;
}

absl::Status Admit(JobPhase phase, JobCall call, absl::string_view job_id) {
  if (call == JobCall::kWatchCheckpoints || call == JobCall::kReleaseCheckpoint) {
    return absl::OkStatus();
  }
  switch (phase) {
    case JobPhase::kStarting:
      return Starting(job_id);
    case JobPhase::kRollingBack:
      return BelongsToTheRun(call) ? RollingBack(job_id) : absl::OkStatus();
    case JobPhase::kEnded:
      return Ended(job_id);
    case JobPhase::kTraining:
    case JobPhase::kFinishing:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace coordinator
}  // namespace pstrain
