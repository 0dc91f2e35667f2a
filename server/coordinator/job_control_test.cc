#include "server/coordinator/job_control.h"

#include <memory>
#include <thread>

#include "common/clock/fake_clock.h"
#include "common/status/error_reason.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

class JobControlTest : public ::testing::Test {
 protected:
  JobControlTest() { clock_.JumpToDeadlines(); }

  FakeClock clock_;
  JobControl control_{"job-1", clock_};
};

TEST_F(JobControlTest, RefusesTrainingCallsWhileStartingThenAdmitsThemWithTheStartedJob) {
  absl::StatusOr<std::shared_ptr<const StartedJob>> early =
      control_.Admit(JobCall::kReportProgress);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(ReasonOf(early.status()), ERROR_REASON_JOB_STARTING);
  EXPECT_EQ(control_.started(), nullptr);

  auto job = std::make_shared<StartedJob>();
  job->num_workers = 2;
  EXPECT_FALSE(control_.Start(job));
  EXPECT_EQ(control_.phase(), JobPhase::kTraining);
  absl::StatusOr<std::shared_ptr<const StartedJob>> admitted =
      control_.Admit(JobCall::kReportProgress);
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  EXPECT_EQ(admitted->get(), job.get());
  EXPECT_TRUE(control_.TrainingGoesOn());

  control_.MoveTo(JobPhase::kRollingBack);
  EXPECT_EQ(ReasonOf(control_.Admit(JobCall::kAcquireDataLease).status()),
            ERROR_REASON_RUN_ROLLED_BACK);
  EXPECT_TRUE(control_.Admit(JobCall::kReportEval).ok());
  control_.MoveTo(JobPhase::kEnded);
  EXPECT_EQ(ReasonOf(control_.Admit(JobCall::kReportEval).status()), ERROR_REASON_JOB_ENDED);
}

TEST_F(JobControlTest, StartSaysAUserStoppedTheJobWhileItStarted) {
  control_.RequestStop(StopMode::kGraceful);
  EXPECT_TRUE(control_.Start(std::make_shared<StartedJob>()));
  EXPECT_FALSE(control_.TrainingGoesOn());
  EXPECT_FALSE(control_.skips_final_work());
}

TEST_F(JobControlTest, AnImmediateStopSkipsTheFinalWork) {
  control_.RequestStop(StopMode::kImmediately);
  EXPECT_TRUE(control_.stop_requested());
  EXPECT_TRUE(control_.skips_final_work());
}

TEST_F(JobControlTest, WaitReturnsAtOnceAfterAPokeAndOnlyOnce) {
  control_.Poke();
  EXPECT_TRUE(control_.WaitForChange(clock_.Now() + absl::Seconds(5)).ok());
  EXPECT_EQ(clock_.slept(), absl::ZeroDuration());
  // The poke was used up: the next wait runs to its deadline.
  EXPECT_TRUE(control_.WaitForChange(clock_.Now() + absl::Seconds(5)).ok());
  EXPECT_EQ(clock_.slept(), absl::Seconds(5));
}

TEST_F(JobControlTest, AWaitEndsWithTheStopOrTheAbortThatInterruptsIt) {
  std::thread stopper([this] {
    while (clock_.NumWaiters() == 0) std::this_thread::yield();
    control_.RequestStop(StopMode::kGraceful);
  });
  EXPECT_TRUE(absl::IsCancelled(control_.WaitForChange(absl::InfiniteFuture())));
  stopper.join();

  EXPECT_TRUE(control_.Abort("the coordinator shut down"));
  EXPECT_FALSE(control_.Abort("again"));
  EXPECT_TRUE(control_.aborted());
  const absl::Status aborted = control_.WaitForChange(absl::InfiniteFuture());
  EXPECT_TRUE(absl::IsAborted(aborted));
  EXPECT_EQ(aborted.message(), "the coordinator shut down");
}

TEST_F(JobControlTest, TheFirstFailureStandsAndWakesTheWait) {
  EXPECT_TRUE(control_.failure().ok());
  control_.Fail(absl::UnavailableError("ps/1 lost"));
  control_.Fail(absl::FailedPreconditionError("evaluator/0 cannot evaluate it"));
  EXPECT_EQ(control_.failure(), absl::UnavailableError("ps/1 lost"));
  EXPECT_TRUE(control_.WaitForChange(clock_.Now() + absl::Hours(1)).ok());
  EXPECT_EQ(clock_.slept(), absl::ZeroDuration());
}

TEST_F(JobControlTest, ListsTheWorkersThatHaveNotHeardTheStop) {
  control_.NoteStopHeard(1);
  control_.NoteStopHeard(7);  // not one of the job's: ignored in the list
  EXPECT_EQ(control_.NotHeardStop({0, 1, 2}), (std::vector<int>{0, 2}));
  EXPECT_EQ(control_.NotHeardStop({1, 5}), (std::vector<int>{5}));
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
