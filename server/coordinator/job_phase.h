#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_PHASE_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_PHASE_H_

// The phases of the running job, the moves between them, and which cluster
// calls each phase admits: the job's state machine in one place, so that
// every call is refused the same way in the same phase.
//
//   kStarting ─────► kTraining ◄─────► kRollingBack
//       │      ready     │   a shard lost,   │
//       │                │   then restored   │
//       │ stopped        │ stop decided      │ stopped
//       └──────────────► kFinishing ◄────────┘
//                            │ final checkpoint and evaluation
//                            ▼
//                          kEnded
//
// Any phase but kEnded may also go straight to kEnded: a failure (members
// that never came, a shard lost while finishing) or the coordinator's
// abort.
//
// Admission of the calls that name the job (coordinator.proto lists the
// reasons):
//
//                      Starting      Training  RollingBack      Finishing  Ended
//   ReportProgress     JOB_STARTING  yes       RUN_ROLLED_BACK  yes        JOB_ENDED
//   AcquireDataLease   JOB_STARTING  yes       RUN_ROLLED_BACK  yes        JOB_ENDED
//   CompleteDataLease  JOB_STARTING  yes       RUN_ROLLED_BACK  yes        JOB_ENDED
//   ReportEval         JOB_STARTING  yes       yes              yes        JOB_ENDED
//   JoinRound          JOB_STARTING  yes       RUN_ROLLED_BACK  yes        JOB_ENDED
//   WatchCheckpoints   yes in every phase (the stream ends with the job)
//   ReleaseCheckpoint  yes in every phase
//
// Training calls are refused while rolling back: the run they belong to is
// void, and the worker takes the job's next assignment. An evaluation stays
// valid across a rollback.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace pstrain {
namespace coordinator {

enum class JobPhase {
  // Waiting for members, placing and creating variables, restoring.
  kStarting,
  // Workers train; checkpoints are taken as scheduled.
  kTraining,
  // Training paused: a parameter server was lost; every shard goes back to
  // the newest good checkpoint as a new generation.
  kRollingBack,
  // Training stopped: the final checkpoint and its evaluation.
  kFinishing,
  // The job has its end state; members go back to idle.
  kEnded,
};

// The cluster calls that name the running job.
enum class JobCall {
  kReportProgress,
  kAcquireDataLease,
  kCompleteDataLease,
  kReportEval,
  kWatchCheckpoints,
  kReleaseCheckpoint,
  kJoinRound,
};

absl::string_view JobPhaseName(JobPhase phase);
absl::string_view JobCallName(JobCall call);

// Whether the job may move from `from` to `to`.
bool CanMove(JobPhase from, JobPhase to);

// OK when `phase` admits `call`; otherwise the refusal to answer with, its
// reason attached (common/status/error_reason.h), naming `job_id`.
absl::Status Admit(JobPhase phase, JobCall call, absl::string_view job_id);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_PHASE_H_
