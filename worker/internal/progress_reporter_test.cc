// The progress reporter against the real coordinator, served in this
// process (InProcessCoordinator) with a job whose only worker is the
// reporter's. What was reported is read from the worker's channel
// (CoordinatorCallLog).

#include "worker/internal/progress_reporter.h"

#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/clock/fake_clock.h"
#include "gtest/gtest.h"
#include "server/coordinator/testing/coordinator_call_log.h"
#include "server/coordinator/testing/in_process_coordinator.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

using coordinator::CoordinatorCallLog;
using coordinator::InProcessCoordinator;

constexpr absl::Duration kWait = absl::Seconds(30);

class ProgressReporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_.JumpToDeadlines();
    root_ = NewTestDir(env_);
    coordinator::CoordinatorOptions options;
    options.checkpoint_root = root_;
    options.runner.num_ps = 2;
    options.runner.num_workers = 1;
    coordinator_ = std::make_unique<InProcessCoordinator>(options);
    CoordinatorClientOptions client;
    client.task.set_type(TASK_TYPE_WORKER);
    client.task.set_index(0);
    client.retry.deadline = absl::Seconds(20);
    absl::StatusOr<std::unique_ptr<CoordinatorClient>> created =
        CoordinatorClient::Create(calls_.NewChannel(coordinator_->address()), client,
                                  MemberSession::NewIncarnation(random_), clock_, random_);
    ASSERT_TRUE(created.ok()) << created.status();
    client_ = *std::move(created);
  }

  // Starts a job of `max_steps` with the worker as its only one; its
  // assignment.
  Assignment StartJob(int64_t max_steps) {
    InProcessCoordinator::TrainingJob job;
    job.model_dir = JoinPath(root_, "model");
    job.max_steps = max_steps;
    EXPECT_TRUE(coordinator_->SubmitTrainingJob(job).ok());
    EXPECT_TRUE(client_->member().Register().ok());
    absl::StatusOr<Assignment> assignment = client_->member().GetAssignment("", 0, kWait);
    EXPECT_TRUE(assignment.ok()) << assignment.status();
    return assignment.ok() ? *assignment : Assignment();
  }

  std::vector<ProgressReport> Reports() const {
    return calls_.Requests<ProgressReport>("ReportProgress");
  }

  PosixEnv env_;
  std::string root_;
  FakeClock clock_;
  SeededRandom random_{3};
  std::unique_ptr<InProcessCoordinator> coordinator_;
  CoordinatorCallLog calls_;
  std::unique_ptr<CoordinatorClient> client_;
};

TEST_F(ProgressReporterTest, ReportsEveryStepsPerLoopStepsWithTheirSums) {
  const Assignment assignment = StartJob(/*max_steps=*/100000);
  ASSERT_FALSE(assignment.job_id().empty());
  ProgressReporter reporter(*client_, assignment, /*steps_per_loop=*/3, clock_, nullptr);
  for (int step = 0; step < 7; ++step) {
    reporter.CountStep(8, /*loss=*/0.5 + step);
    reporter.NoteVersion(step + 1);
    reporter.ReportIfDue();
  }
  std::vector<ProgressReport> reports = Reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].steps(), 3);
  EXPECT_EQ(reports[0].examples(), 24);
  EXPECT_DOUBLE_EQ(reports[0].loss(), 1.5);  // mean of 0.5, 1.5, 2.5
  EXPECT_EQ(reports[0].parameter_version(), 3);
  EXPECT_EQ(reports[0].generation(), assignment.generation());
  EXPECT_EQ(reports[1].steps(), 3);
  EXPECT_EQ(reports[1].parameter_version(), 6);
  // The seventh step waits for its loop, or for a report of any steps.
  reporter.ReportAnySteps();
  reports = Reports();
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[2].steps(), 1);
  reporter.ReportAnySteps();  // none since: nothing sent
  EXPECT_EQ(Reports().size(), 3u);
  EXPECT_FALSE(reporter.training_over());
}

TEST_F(ProgressReporterTest, AnOlderVersionTakesNothingBack) {
  const Assignment assignment = StartJob(/*max_steps=*/100000);
  ASSERT_FALSE(assignment.job_id().empty());
  ProgressReporter reporter(*client_, assignment, /*steps_per_loop=*/1, clock_, nullptr);
  reporter.NoteVersion(9);
  reporter.NoteVersion(7);  // a slower shard's answer
  reporter.CountStep(8, 0.1);
  reporter.ReportIfDue();
  ASSERT_EQ(Reports().size(), 1u);
  EXPECT_EQ(Reports()[0].parameter_version(), 9);
}

TEST_F(ProgressReporterTest, HearsTheStopOnceTheShardsAppliedMaxSteps) {
  const Assignment assignment = StartJob(/*max_steps=*/4);
  ASSERT_FALSE(assignment.job_id().empty());
  ProgressReporter reporter(*client_, assignment, /*steps_per_loop=*/100, clock_, nullptr);
  // Not sooner than steps_per_loop near max_steps: the worker stops there
  // by the shards' answers, and reports then.
  for (int step = 0; step < 4; ++step) {
    reporter.CountStep(8, 0.1);
    reporter.NoteVersion(step + 1);
    reporter.ReportIfDue();
  }
  EXPECT_TRUE(Reports().empty());
  reporter.ReportAnySteps();
  ASSERT_EQ(Reports().size(), 1u);
  EXPECT_EQ(Reports()[0].steps(), 4);
  // The global step reached max_steps: the answer says stop.
  EXPECT_TRUE(reporter.training_over());
}

}  // namespace
}  // namespace internal
}  // namespace worker
}  // namespace pstrain
