#include "bench/cluster/process_pauser.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <limits>

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

TEST(PauseCycleTest, SplitsThePeriodByTheStoppedShare) {
  absl::StatusOr<PauseCycle> cycle = PauseCycle::Make(absl::Milliseconds(300), 2.0 / 3);
  ASSERT_TRUE(cycle.ok()) << cycle.status();
  EXPECT_NEAR(absl::ToDoubleMilliseconds(cycle->Stopped()), 200, 1e-6);
  EXPECT_NEAR(absl::ToDoubleMilliseconds(cycle->Running()), 100, 1e-6);
  EXPECT_EQ(cycle->Describe(), "stopped 200 ms of every 300 ms");
}

TEST(PauseCycleTest, RefusesAProcessStoppedForGoodOrAnEmptyPeriod) {
  EXPECT_EQ(PauseCycle::Make(absl::Milliseconds(300), 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PauseCycle::Make(absl::Milliseconds(300), -0.1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PauseCycle::Make(absl::ZeroDuration(), 0.5).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(PauseCycle::Make(absl::Milliseconds(300), 0).ok());
}

// A child that waits for signals; the parent reaps it.
class PausedChildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    child_ = ::fork();
    ASSERT_GE(child_, 0);
    if (child_ == 0) {
      for (;;) ::pause();
    }
  }
  void TearDown() override {
    if (child_ <= 0) return;
    ::kill(child_, SIGKILL);
    int status = 0;
    ::waitpid(child_, &status, 0);
  }
  // Waits for the child's next stop or continue, as waitpid reports it.
  int NextChange() {
    int status = 0;
    EXPECT_EQ(::waitpid(child_, &status, WUNTRACED | WCONTINUED), child_);
    return status;
  }
  pid_t child_ = -1;
};

TEST_F(PausedChildTest, StopsTheProcessAndLeavesItRunning) {
  ProcessPauser pauser(child_, *PauseCycle::Make(absl::Hours(1), 0.5));
  ASSERT_TRUE(pauser.Start().ok());
  EXPECT_EQ(pauser.Start().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(WIFSTOPPED(NextChange()));
  // Within the hour-long stopped phase: Stop() must not wait it out.
  ASSERT_TRUE(pauser.Stop().ok());
  EXPECT_TRUE(WIFCONTINUED(NextChange()));
  EXPECT_TRUE(pauser.Stop().ok());
}

TEST(ProcessPauserTest, NamesASignalThatFailed) {
  // Above any pid_max Linux allows: no process has it.
  ProcessPauser pauser(std::numeric_limits<pid_t>::max(),
                       *PauseCycle::Make(absl::Milliseconds(10), 0.5));
  ASSERT_TRUE(pauser.Start().ok());
  absl::Status stopped = pauser.Stop();
  EXPECT_EQ(stopped.code(), absl::StatusCode::kInternal);
  // SIGSTOP or SIGCONT, whichever the cycles reached first.
  EXPECT_NE(stopped.message().find("cannot send SIG"), absl::string_view::npos) << stopped;
  EXPECT_NE(stopped.message().find("to process 2147483647"), absl::string_view::npos) << stopped;
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
