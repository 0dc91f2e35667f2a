#include "server/coordinator/job_phase.h"

#include <vector>

#include "common/status/error_reason.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

const std::vector<JobPhase> kPhases = {JobPhase::kStarting, JobPhase::kTraining,
                                       JobPhase::kRollingBack, JobPhase::kFinishing,
                                       JobPhase::kEnded};
const std::vector<JobCall> kCalls = {JobCall::kReportProgress,    JobCall::kAcquireDataLease,
                                     JobCall::kCompleteDataLease, JobCall::kReportEval,
                                     JobCall::kWatchCheckpoints,  JobCall::kReleaseCheckpoint,
                                     JobCall::kJoinRound};

TEST(JobPhaseTest, TheMovesAreThoseOfTheDiagram) {
  const std::vector<std::pair<JobPhase, JobPhase>> allowed = {
      {JobPhase::kStarting, JobPhase::kTraining},     {JobPhase::kStarting, JobPhase::kFinishing},
      {JobPhase::kTraining, JobPhase::kRollingBack},  {JobPhase::kTraining, JobPhase::kFinishing},
      {JobPhase::kRollingBack, JobPhase::kTraining},  {JobPhase::kRollingBack, JobPhase::kFinishing},
      {JobPhase::kStarting, JobPhase::kEnded},        {JobPhase::kTraining, JobPhase::kEnded},
      {JobPhase::kRollingBack, JobPhase::kEnded},     {JobPhase::kFinishing, JobPhase::kEnded}};
  for (JobPhase from : kPhases) {
    for (JobPhase to : kPhases) {
      bool expected = false;
      for (const auto& [a, b] : allowed) expected |= a == from && b == to;
      EXPECT_EQ(CanMove(from, to), expected)
          << JobPhaseName(from) << " -> " << JobPhaseName(to);
    }
  }
}

// The admission table of job_phase.h, row by row: the reason each refusal
// carries, or UNSPECIFIED where the call is admitted.
TEST(JobPhaseTest, EachPhaseAdmitsTheCallsOfTheTable) {
  constexpr ErrorReason kYes = ERROR_REASON_UNSPECIFIED;
  constexpr ErrorReason kStarting = ERROR_REASON_JOB_STARTING;
  constexpr ErrorReason kRolledBack = ERROR_REASON_RUN_ROLLED_BACK;
  constexpr ErrorReason kEnded = ERROR_REASON_JOB_ENDED;
  // Columns: starting, training, rolling back, finishing, ended.
  const std::vector<std::vector<ErrorReason>> table = {
      {kStarting, kYes, kRolledBack, kYes, kEnded},  // ReportProgress
      {kStarting, kYes, kRolledBack, kYes, kEnded},  // AcquireDataLease
      {kStarting, kYes, kRolledBack, kYes, kEnded},  // CompleteDataLease
      {kStarting, kYes, kYes, kYes, kEnded},         // ReportEval
      {kYes, kYes, kYes, kYes, kYes},                // WatchCheckpoints
      {kYes, kYes, kYes, kYes, kYes},                // ReleaseCheckpoint
      {kStarting, kYes, kRolledBack, kYes, kEnded},  // JoinRound
  };
  for (size_t c = 0; c < kCalls.size(); ++c) {
    for (size_t p = 0; p < kPhases.size(); ++p) {
      const absl::Status admitted = Admit(kPhases[p], kCalls[c], "job-7");
      EXPECT_EQ(admitted.ok(), table[c][p] == kYes)
          << JobCallName(kCalls[c]) << " while " << JobPhaseName(kPhases[p]) << ": " << admitted;
      EXPECT_EQ(ReasonOf(admitted), table[c][p])
          << JobCallName(kCalls[c]) << " while " << JobPhaseName(kPhases[p]) << ": " << admitted;
      if (!admitted.ok()) {
        EXPECT_NE(admitted.message().find("job job-7"), absl::string_view::npos) << admitted;
      }
    }
  }
}

TEST(JobPhaseTest, RefusalsUseTheCodesMembersActOn) {
  EXPECT_TRUE(absl::IsUnavailable(Admit(JobPhase::kStarting, JobCall::kAcquireDataLease, "j")));
  EXPECT_TRUE(
      absl::IsFailedPrecondition(Admit(JobPhase::kRollingBack, JobCall::kReportProgress, "j")));
  EXPECT_TRUE(absl::IsFailedPrecondition(Admit(JobPhase::kEnded, JobCall::kReportEval, "j")));
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
