#include "client/exit_code.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(ExitCodeTest, StatusesMapToWhatTheCallerShouldDo) {
  EXPECT_EQ(ExitCodeForStatus(absl::OkStatus()), 0);
  EXPECT_EQ(ExitCodeForStatus(absl::InvalidArgumentError("optimizer.learning_rate")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::NotFoundError("no job x")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::UnavailableError("cannot reach")), 3);
  EXPECT_EQ(ExitCodeForStatus(absl::ResourceExhaustedError("the queue is full")), 4);
  EXPECT_EQ(ExitCodeForStatus(absl::FailedPreconditionError("a job runs")), 1);
  EXPECT_EQ(ExitCodeForStatus(absl::DeadlineExceededError("took too long")), 1);
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
