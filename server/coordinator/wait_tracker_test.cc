#include "server/coordinator/wait_tracker.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(FormatWaitTest, SaysWhatAndSinceWhen) {
  const absl::Time start = absl::FromUnixSeconds(1000);
  EXPECT_EQ(FormatWait("ps/1", start, start + absl::Seconds(12)), "waiting for ps/1 since 12s");
}

TEST(FormatWaitTest, AgesReadForPeople) {
  EXPECT_EQ(FormatWaitAge(absl::Milliseconds(400)), "0s");
  EXPECT_EQ(FormatWaitAge(absl::Seconds(59)), "59s");
  EXPECT_EQ(FormatWaitAge(absl::Seconds(184)), "3m04s");
  EXPECT_EQ(FormatWaitAge(absl::Hours(2) + absl::Minutes(5) + absl::Seconds(9)), "2h05m");
  EXPECT_EQ(FormatWaitAge(-absl::Seconds(3)), "0s");
}

class WaitTrackerTest : public ::testing::Test {
 protected:
  WaitTracker::Sink Sink() {
    return [this](const std::string& message) { reports_.push_back(message); };
  }

  FakeClock clock_;
  std::vector<std::string> reports_;
};

TEST_F(WaitTrackerTest, QuietAtFirstThenReportsAtMostOncePerInterval) {
  WaitTracker wait(clock_, "ps/1", clock_.Now() + absl::Minutes(5), {}, Sink());
  EXPECT_TRUE(wait.Check().ok());
  clock_.Advance(absl::Seconds(4));
  EXPECT_TRUE(wait.Check().ok());
  EXPECT_THAT(reports_, IsEmpty());

  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(wait.Check().ok());
  EXPECT_TRUE(wait.Check().ok());  // same instant: no second report
  clock_.Advance(absl::Seconds(9));
  EXPECT_TRUE(wait.Check().ok());
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(wait.Check().ok());
  EXPECT_THAT(reports_, ElementsAre("waiting for ps/1 since 5s", "waiting for ps/1 since 15s"));
}

TEST_F(WaitTrackerTest, ALateWakeUpReportsOnce) {
  WaitTracker wait(clock_, "worker/0", clock_.Now() + absl::Hours(1), {}, Sink());
  clock_.Advance(absl::Minutes(2));
  EXPECT_TRUE(wait.Check().ok());
  EXPECT_TRUE(wait.Check().ok());
  EXPECT_THAT(reports_, ElementsAre("waiting for worker/0 since 2m00s"));
}

TEST_F(WaitTrackerTest, DeadlineFailsWithWhatItWaitedFor) {
  WaitTracker wait(clock_, "ps/0, ps/1", clock_.Now() + absl::Seconds(30), {}, Sink());
  clock_.Advance(absl::Seconds(20));
  wait.SetWhat("ps/1");
  EXPECT_TRUE(wait.Check().ok());
  clock_.Advance(absl::Seconds(10));
  absl::Status status = wait.Check();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(status.message(), "gave up waiting for ps/1 after 30s");
  EXPECT_EQ(wait.Check().code(), absl::StatusCode::kDeadlineExceeded);
  // The give-up is reported once, not on every later check.
  EXPECT_THAT(reports_,
              ElementsAre("waiting for ps/1 since 20s", "gave up waiting for ps/1 after 30s"));
}

TEST_F(WaitTrackerTest, DescribeIsCurrent) {
  WaitTracker wait(clock_, "the evaluator", absl::InfiniteFuture(), {}, Sink());
  clock_.Advance(absl::Seconds(75));
  EXPECT_EQ(wait.Describe(), "waiting for the evaluator since 1m15s");
  // Without the age: what changes only with what is waited for.
  EXPECT_EQ(wait.Waiting(), "waiting for the evaluator");
  wait.SetWhat("evaluator/0");
  EXPECT_EQ(wait.Waiting(), "waiting for evaluator/0");
  EXPECT_THAT(reports_, IsEmpty());
}

TEST_F(WaitTrackerTest, IntervalsAreConfigurable) {
  WaitTrackerOptions options;
  options.first_report_after = absl::ZeroDuration();
  options.report_every = absl::Seconds(1);
  WaitTracker wait(clock_, "ps/2", absl::InfiniteFuture(), options, Sink());
  EXPECT_TRUE(wait.Check().ok());
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(wait.Check().ok());
  EXPECT_THAT(reports_, ElementsAre("waiting for ps/2 since 0s", "waiting for ps/2 since 1s"));
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
