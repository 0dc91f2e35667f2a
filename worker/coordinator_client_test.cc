#include "worker/coordinator_client.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"
#include "worker/testing/fake_cluster_service.h"

namespace pstrain {
namespace worker {
namespace {

class CoordinatorClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Retry pauses and heartbeat intervals pass without real time.
    clock_.JumpToDeadlines();
    ASSERT_TRUE(coordinator_.Start().ok());
    CoordinatorClientOptions options;
    options.task.set_type(TASK_TYPE_WORKER);
    options.task.set_index(3);
    options.call_timeout = absl::Seconds(10);
    options.retry.deadline = absl::Seconds(20);
    absl::StatusOr<std::unique_ptr<CoordinatorClient>> client = CoordinatorClient::Create(
        grpc::CreateChannel(coordinator_.address(), grpc::InsecureChannelCredentials()), options,
        MemberSession::NewIncarnation(random_), clock_, random_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  Assignment JobAssignment(const std::string& job) {
    Assignment a;
    a.set_job_id(job);
    return a;
  }

  SeededRandom random_{5};
  FakeClock clock_;
  FakeClusterService coordinator_;
  std::unique_ptr<CoordinatorClient> client_;
};

TEST_F(CoordinatorClientTest, RegistersWithANonZeroIncarnation) {
  ASSERT_TRUE(client_->member().Register().ok());
  EXPECT_NE(client_->member().incarnation(), 0u);
  EXPECT_EQ(coordinator_.incarnation_of(3), client_->member().incarnation());
}

TEST_F(CoordinatorClientTest, ReregistersWithTheSameIncarnationWhenAborted) {
  ASSERT_TRUE(client_->member().Register().ok());
  coordinator_.SetAssignment(JobAssignment("job-1"));
  coordinator_.AbortNextCalls(1);
  absl::StatusOr<Assignment> assignment = client_->member().GetAssignment("", 0, absl::Milliseconds(100));
  ASSERT_TRUE(assignment.ok()) << assignment.status();
  EXPECT_EQ(assignment->job_id(), "job-1");
  EXPECT_EQ(coordinator_.registrations(), 2);
  EXPECT_EQ(coordinator_.incarnation_of(3), client_->member().incarnation());
}

TEST_F(CoordinatorClientTest, CarriesOnAfterTheCoordinatorForgetsItsMembers) {
  ASSERT_TRUE(client_->member().Register().ok());
  coordinator_.SetAssignment(JobAssignment("job-1"));
  coordinator_.AddLease(11, 0, 100);
  coordinator_.ForgetMembers();  // a restarted coordinator
  absl::StatusOr<DataLease> lease = client_->AcquireDataLease("job-1");
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_EQ(lease->lease_id(), 11);
  EXPECT_EQ(coordinator_.registrations(), 2);
}

TEST_F(CoordinatorClientTest, HeartbeatsReregisterAndReportTheJob) {
  coordinator_.SetHeartbeatInterval(absl::Milliseconds(10));
  ASSERT_TRUE(client_->member().Register().ok());
  coordinator_.SetAssignment(JobAssignment("job-7"));
  // Heartbeats pause on the fake clock, which returns at once: use a real
  // one for the thread.
  RealClock real;
  CoordinatorClientOptions options;
  options.task.set_type(TASK_TYPE_WORKER);
  options.task.set_index(3);
  auto client = *CoordinatorClient::Create(
      grpc::CreateChannel(coordinator_.address(), grpc::InsecureChannelCredentials()), options,
      client_->member().incarnation(), real, random_);
  ASSERT_TRUE(client->member().Register().ok());
  client->member().StartHeartbeats();
  HeartbeatView view = client->member().WaitForHeartbeat(0, absl::Seconds(10));
  EXPECT_EQ(view.job_id, "job-7");
  coordinator_.ForgetMembers();
  const int registrations = coordinator_.registrations();
  view = client->member().WaitForHeartbeat(view.answers + 1, absl::Seconds(10));
  EXPECT_GT(view.answers, 1);
  EXPECT_GT(coordinator_.registrations(), registrations);
  coordinator_.SetShutdown(true);
  for (int i = 0; i < 100 && !view.shutdown; ++i) {
    view = client->member().WaitForHeartbeat(view.answers, absl::Seconds(10));
  }
  EXPECT_TRUE(view.shutdown);
}

TEST_F(CoordinatorClientTest, ProgressReportsAreNumberedAndAnUnsentOneKeepsItsNumber) {
  ASSERT_TRUE(client_->member().Register().ok());
  coordinator_.SetAssignment(JobAssignment("job-1"));
  ProgressReport report;
  report.set_job_id("job-1");
  report.set_steps(10);
  ASSERT_TRUE(client_->ReportProgress(report).ok());

  // The coordinator is unreachable past the retry deadline: the second
  // report is kept.
  coordinator_.UnavailableNextCalls(1000000);
  report.set_steps(20);
  EXPECT_TRUE(absl::IsDeadlineExceeded(client_->ReportProgress(report).status()));

  // Back: the kept report goes first, with its number and content.
  coordinator_.UnavailableNextCalls(0);
  report.set_steps(30);
  ASSERT_TRUE(client_->ReportProgress(report).ok());
  std::vector<ProgressReport> reports = coordinator_.reports();
  ASSERT_EQ(reports.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(reports[i].sequence(), static_cast<uint64_t>(i + 1));
    EXPECT_EQ(reports[i].steps(), 10 * (i + 1));
    EXPECT_EQ(reports[i].incarnation(), client_->member().incarnation());
    EXPECT_EQ(reports[i].task().index(), 3);
  }
}

TEST_F(CoordinatorClientTest, ARetriedReportIsCountedOnce) {
  ASSERT_TRUE(client_->member().Register().ok());
  coordinator_.SetAssignment(JobAssignment("job-1"));
  ProgressReport report;
  report.set_job_id("job-1");
  report.set_applied_updates(5);
  ASSERT_TRUE(client_->ReportProgress(report).ok());
  // Aborted once: the client registers again and resends the same report.
  coordinator_.AbortNextCalls(1);
  absl::StatusOr<ProgressResponse> response = client_->ReportProgress(report);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->global_step(), 10);
  std::vector<ProgressReport> reports = coordinator_.reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].sequence(), 2u);
}

TEST_F(CoordinatorClientTest, EndedJobIsFailedPrecondition) {
  ASSERT_TRUE(client_->member().Register().ok());
  coordinator_.SetAssignment(JobAssignment("job-2"));
  ProgressReport report;
  report.set_job_id("job-1");
  EXPECT_TRUE(absl::IsFailedPrecondition(client_->ReportProgress(report).status()));
}

TEST_F(CoordinatorClientTest, CompletesLeasesWithReturnedRecords) {
  ASSERT_TRUE(client_->member().Register().ok());
  RecordRange returned;
  returned.set_begin(10);
  returned.set_end(20);
  ASSERT_TRUE(client_->CompleteDataLease("job-1", 4, {returned}).ok());
  std::vector<CompleteDataLeaseRequest> completions = coordinator_.completions();
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0].lease_id(), 4);
  ASSERT_EQ(completions[0].returned_size(), 1);
  EXPECT_EQ(completions[0].returned(0).begin(), 10);
}

TEST_F(CoordinatorClientTest, UnreachableCoordinatorGivesUpAtTheRetryDeadline) {
  coordinator_.Shutdown();
  absl::Status status = client_->member().Register();
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("coordinator"));
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
