// The member session against the real coordinator, served in this process
// on 127.0.0.1. The session's clock jumps to every deadline, so retry
// pauses and heartbeat intervals take no real time; the coordinator's own
// clock moves only when a test advances it.

#include "common/cluster/member_session.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/clock/fake_clock.h"
#include "common/daemon/exit_codes.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "server/coordinator/testing/in_process_coordinator.h"

namespace pstrain {
namespace {

using coordinator::InProcessCoordinator;

class MemberSessionTest : public ::testing::Test {
 protected:
  MemberSessionTest() { clock_.JumpToDeadlines(); }

  std::unique_ptr<MemberSession> NewSession(MemberSessionOptions options = {}) {
    options.task.set_type(TASK_TYPE_WORKER);
    options.task.set_index(1);
    options.address = "127.0.0.1:5555";
    options.coordinator_address = coordinator_.address();
    options.retry.deadline = absl::Seconds(20);
    absl::StatusOr<std::unique_ptr<MemberSession>> session = MemberSession::Create(
        grpc::CreateChannel(coordinator_.address(), grpc::InsecureChannelCredentials()),
        std::move(options), MemberSession::NewIncarnation(random_), clock_, random_);
    EXPECT_TRUE(session.ok()) << session.status();
    return *std::move(session);
  }

  // The coordinator's view of worker/1; a default Member when unlisted.
  Member Listed() {
    const ClusterStatus cluster = coordinator_.coordinator().GetCluster();
    for (const Member& member : cluster.members()) {
      if (member.task().type() == TASK_TYPE_WORKER && member.task().index() == 1) return member;
    }
    return Member();
  }

  InProcessCoordinator coordinator_;
  FakeClock clock_;
  SeededRandom random_{7};
};

TEST_F(MemberSessionTest, RefusesAZeroIncarnationAndATaskWithoutAType) {
  auto channel = grpc::CreateChannel(coordinator_.address(), grpc::InsecureChannelCredentials());
  MemberSessionOptions options;
  options.task.set_type(TASK_TYPE_WORKER);
  EXPECT_TRUE(absl::IsInvalidArgument(
      MemberSession::Create(channel, options, 0, clock_, random_).status()));
  options.task.set_type(TASK_TYPE_UNSPECIFIED);
  EXPECT_TRUE(absl::IsInvalidArgument(
      MemberSession::Create(channel, options, 1, clock_, random_).status()));
}

TEST_F(MemberSessionTest, RegistersAndHeartbeatsCarryTheMembersDescription) {
  MemberSessionOptions options;
  options.describe_self = [](HeartbeatRequest* beat) {
    beat->set_step(17);
    beat->set_health(MEMBER_HEALTH_DEGRADED);
    beat->set_health_detail("disk slow");
  };
  std::unique_ptr<MemberSession> session = NewSession(options);
  EXPECT_EQ(session->MembershipDeadline(), absl::InfinitePast());
  ASSERT_TRUE(session->Register().ok());
  EXPECT_EQ(Listed().incarnation(), session->incarnation());
  EXPECT_EQ(Listed().address(), "127.0.0.1:5555");
  // Three quarters of the coordinator's 10 s heartbeat timeout.
  EXPECT_EQ(session->MembershipDeadline(), clock_.Now() + absl::Milliseconds(7500));

  session->StartHeartbeats();
  HeartbeatView view = session->WaitForHeartbeat(0, absl::Seconds(30));
  EXPECT_GE(view.answers, 1);
  EXPECT_FALSE(view.shutdown);
  const Member listed = Listed();
  EXPECT_EQ(listed.step(), 17);
  EXPECT_EQ(listed.health(), MEMBER_HEALTH_DEGRADED);
  EXPECT_EQ(listed.health_detail(), "disk slow");
  EXPECT_EQ(session->reregistrations(), 0);
}

TEST_F(MemberSessionTest, ARestartedCoordinatorGetsTheSameIncarnationAgain) {
  std::unique_ptr<MemberSession> session = NewSession();
  ASSERT_TRUE(session->Register().ok());
  coordinator_.Restart();  // it has forgotten every member
  absl::StatusOr<Assignment> assignment = session->GetAssignment("", 0, absl::ZeroDuration());
  ASSERT_TRUE(assignment.ok()) << assignment.status();
  EXPECT_EQ(Listed().incarnation(), session->incarnation());
  EXPECT_EQ(session->reregistrations(), 1);
}

TEST_F(MemberSessionTest, HeartbeatsRegisterFirstAndAgainAfterARestart) {
  std::unique_ptr<MemberSession> session = NewSession();
  session->StartHeartbeats();  // without Register(): the thread registers
  HeartbeatView view = session->WaitForHeartbeat(0, absl::Seconds(30));
  ASSERT_GE(view.answers, 1);
  EXPECT_EQ(Listed().incarnation(), session->incarnation());

  coordinator_.Restart();
  for (int i = 0; i < 1000 && session->reregistrations() == 0; ++i) {
    view = session->WaitForHeartbeat(view.answers, absl::Seconds(30));
  }
  EXPECT_EQ(session->reregistrations(), 1);
  EXPECT_EQ(Listed().incarnation(), session->incarnation());
}

TEST_F(MemberSessionTest, ARefusalCarriesItsReasonAndOnlyMembershipOnesRegisterAgain) {
  std::unique_ptr<MemberSession> session = NewSession();
  ASSERT_TRUE(session->Register().ok());
  ProgressReport report;
  *report.mutable_task() = session->task();
  report.set_incarnation(session->incarnation());
  report.set_job_id("no-such-job");
  ProgressResponse response;
  absl::Status status =
      session->Call("progress report", &ClusterService::Stub::ReportProgress, report, &response);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_EQ(ReasonOf(status), ERROR_REASON_JOB_ENDED) << status;
  EXPECT_NE(status.message().find("(progress report): "), absl::string_view::npos) << status;
  EXPECT_EQ(session->reregistrations(), 0);

  // A coordinator that forgot the member: it registers again, then hears
  // about the job.
  coordinator_.Restart();
  status =
      session->Call("progress report", &ClusterService::Stub::ReportProgress, report, &response);
  EXPECT_EQ(ReasonOf(status), ERROR_REASON_JOB_ENDED) << status;
  EXPECT_EQ(session->reregistrations(), 1);
}

TEST_F(MemberSessionTest, AnUnreachableCoordinatorIsNamedWhenTheRetriesGiveUp) {
  coordinator_.Stop();
  std::unique_ptr<MemberSession> session = NewSession();
  absl::Status status = session->Register();
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_NE(status.message().find("the coordinator at " + coordinator_.address() + " (register)"),
            absl::string_view::npos)
      << status;
  EXPECT_LE(clock_.slept(), absl::Seconds(20));
  EXPECT_GE(clock_.slept(), absl::Seconds(10));
}

TEST_F(MemberSessionTest, ItsStandingFollowsTheHeartbeats) {
  absl::Mutex mu;
  std::vector<bool> standing;
  MemberSessionOptions options;
  options.on_membership = [&](bool member) {
    absl::MutexLock lock(&mu);
    standing.push_back(member);
  };
  std::unique_ptr<MemberSession> session = NewSession(options);
  ASSERT_TRUE(session->Register().ok());
  session->StartHeartbeats();
  auto told = [&](size_t count) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      {
        absl::MutexLock lock(&mu);
        if (standing.size() >= count) return true;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    return false;
  };
  ASSERT_TRUE(told(1));
  // Unanswered heartbeats: once the membership deadline has passed (the
  // fake clock runs to each retry), the member is no longer one.
  coordinator_.Stop();
  ASSERT_TRUE(told(2));
  session.reset();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(standing, (std::vector<bool>{true, false}));
}

TEST_F(MemberSessionTest, CancelEndsRetriesAndLaterCalls) {
  coordinator_.Stop();
  std::unique_ptr<MemberSession> session = NewSession();
  session->Cancel();
  EXPECT_TRUE(absl::IsCancelled(session->Register()));
  EXPECT_TRUE(absl::IsCancelled(session->GetAssignment("", 0, absl::Seconds(1)).status()));
  EXPECT_TRUE(session->cancelled());
}

TEST_F(MemberSessionTest, AShutdownEndsTheHeartbeatsAndTellsTheProcessItsExitCode) {
  std::atomic<int> told{0};
  std::atomic<int> told_exit_code{-1};
  MemberSessionOptions options;
  options.on_shutdown = [&](int exit_code) {
    ++told;
    told_exit_code = exit_code;
  };
  std::unique_ptr<MemberSession> session = NewSession(options);
  ASSERT_TRUE(session->Register().ok());
  // As a one-shot cluster whose job failed shuts down.
  ASSERT_TRUE(coordinator_.coordinator().Shutdown(ShutdownRequest(), kDaemonExitJobFailed).ok());
  session->StartHeartbeats();
  HeartbeatView view;
  for (int i = 0; i < 1000 && !view.shutdown; ++i) {
    view = session->WaitForHeartbeat(view.answers, absl::Seconds(30));
  }
  EXPECT_TRUE(view.shutdown);
  EXPECT_EQ(view.exit_code, kDaemonExitJobFailed);
  // The thread ends by itself once it has told the process.
  session.reset();
  EXPECT_EQ(told.load(), 1);
  EXPECT_EQ(told_exit_code.load(), kDaemonExitJobFailed);
}

}  // namespace
}  // namespace pstrain
