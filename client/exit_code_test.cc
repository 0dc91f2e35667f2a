#include "client/exit_code.h"

#include <string>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(ExitCodeTest, StatusesMapToWhatTheCallerShouldDo) {
  EXPECT_EQ(ExitCodeForStatus(absl::OkStatus()), 0);
  EXPECT_EQ(ExitCodeForStatus(absl::InvalidArgumentError("optimizer.learning_rate")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::NotFoundError("no job x")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::UnavailableError("cannot reach")), 3);
  EXPECT_EQ(ExitCodeForStatus(absl::ResourceExhaustedError("the queue is full")), 4);
  EXPECT_EQ(ExitCodeForStatus(absl::UnauthenticatedError("wrong token")), 5);
  EXPECT_EQ(ExitCodeForStatus(absl::PermissionDeniedError("not this token")), 5);
  EXPECT_EQ(ExitCodeForStatus(absl::FailedPreconditionError("a job runs")), 7);
  EXPECT_EQ(ExitCodeForStatus(absl::DeadlineExceededError("no answer")), 3);
  EXPECT_EQ(ExitCodeForStatus(absl::InternalError("a bug")), 8);
  EXPECT_EQ(ExitCodeForStatus(absl::DataLossError("a torn file")), 8);
}

TEST(ExitCodeTest, OnlyAWaitRunningOutIsGivingUp) {
  EXPECT_EQ(ExitCodeForWait(absl::DeadlineExceededError("job x did not end within 1s")), 6);
  EXPECT_EQ(ExitCodeForWait(absl::NotFoundError("no job x")), 2);
  EXPECT_EQ(ExitCodeForWait(absl::UnavailableError("cannot reach")), 3);
}

TEST(ExitCodeTest, TheTableFitsATerminal) {
  for (absl::string_view line : absl::StrSplit(ExitCodeTable(), '\n')) {
    EXPECT_LE(line.size(), 80u) << line;
  }
}

TEST(ExitCodeTest, TheTableListsEveryCodeInOrder) {
  const std::string table = ExitCodeTable();
  size_t previous = 0;
  for (int code = kExitSuccess; code <= kExitInternal; ++code) {
    const size_t at = table.find("  " + std::to_string(code) + "  ");
    ASSERT_NE(at, std::string::npos) << code << " missing from\n" << table;
    EXPECT_GE(at, previous) << code << " out of order in\n" << table;
    previous = at;
  }
}

TEST(ExitCodeTest, OnlyFailedAndStoppedJobsAreFailures) {
  EXPECT_EQ(ExitCodeForJobState(JOB_STATE_SUCCEEDED), 0);
  EXPECT_EQ(ExitCodeForJobState(JOB_STATE_RUNNING), 0);
  EXPECT_EQ(ExitCodeForJobState(JOB_STATE_QUEUED), 0);
  EXPECT_EQ(ExitCodeForJobState(JOB_STATE_FAILED), 1);
  EXPECT_EQ(ExitCodeForJobState(JOB_STATE_STOPPED), 1);
}

}  // namespace
}  // namespace pstrain
