// The worker's coordinator client against the real coordinator, served in
// this process (InProcessCoordinator). The test submits a training job and
// plays the part of its parameter servers and of the other workers (0 to 2)
// through the coordinator's own calls; the client is worker/3. The client's
// clock jumps to every deadline, so retry pauses take no real time; the
// coordinator's clock moves only when a test advances it. What the client
// sent and the coordinator accepted is read from the client's channel
// (CoordinatorCallLog).

#include "worker/coordinator_client.h"

#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/clock/fake_clock.h"
#include "common/status/error_reason.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "protos/coordinator.grpc.pb.h"
#include "server/coordinator/testing/coordinator_call_log.h"
#include "server/coordinator/testing/in_process_coordinator.h"

namespace pstrain {
namespace worker {
namespace {

using coordinator::CoordinatorCallLog;
using coordinator::InProcessCoordinator;

constexpr absl::Duration kWait = absl::Seconds(30);
constexpr int kClientIndex = 3;
constexpr int kRecordsPerLease = 100;

TaskId Task(TaskType type, int index) {
  TaskId task;
  task.set_type(type);
  task.set_index(index);
  return task;
}

class CoordinatorClientTest : public ::testing::Test {
 protected:
  CoordinatorClientTest() {
    root_ = NewTestDir(env_);
    coordinator::CoordinatorOptions options;
    options.checkpoint_root = root_;
    // A restarted coordinator resumes the running job, as in production.
    options.state_dir = JoinPath(root_, "state");
    options.runner.num_ps = 2;
    options.runner.num_workers = kClientIndex + 1;
    options.runner.records_per_lease = kRecordsPerLease;
    // Heartbeats of a client on a real clock come quickly.
    options.membership.heartbeat_interval = absl::Milliseconds(50);
    coordinator_ = std::make_unique<InProcessCoordinator>(options);
  }

  void SetUp() override {
    // Retry pauses and heartbeat intervals pass without real time.
    clock_.JumpToDeadlines();
    client_ = NewClient(clock_, MemberSession::NewIncarnation(random_));
  }

  std::unique_ptr<CoordinatorClient> NewClient(Clock& clock, uint64_t incarnation) {
    CoordinatorClientOptions options;
    options.task = Task(TASK_TYPE_WORKER, kClientIndex);
    options.coordinator_address = coordinator_->address();
    options.call_timeout = absl::Seconds(10);
    options.retry.deadline = absl::Seconds(20);
    channel_ = calls_.NewChannel(coordinator_->address());
    absl::StatusOr<std::unique_ptr<CoordinatorClient>> client =
        CoordinatorClient::Create(channel_, options, incarnation, clock, random_);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // Submits a training job, registers its parameter servers and the other
  // workers, and waits until the job runs (the client must be registered).
  void StartJob() {
    InProcessCoordinator::TrainingJob job;
    job.model_dir = JoinPath(root_, "model");
    absl::StatusOr<std::string> job_id = coordinator_->SubmitTrainingJob(job);
    ASSERT_TRUE(job_id.ok()) << job_id.status();
    job_id_ = *job_id;
    ASSERT_NO_FATAL_FAILURE(RegisterOtherWorkers());
    ASSERT_NO_FATAL_FAILURE(AwaitRunning());
  }

  // The job's parameter servers and workers other than the client register
  // (again, after a restart).
  void RegisterPeers() {
    ASSERT_TRUE(coordinator_->RegisterShards().ok());
    ASSERT_NO_FATAL_FAILURE(RegisterOtherWorkers());
  }

  void RegisterOtherWorkers() {
    for (const TaskId& task : Peers()) {
      if (task.type() != TASK_TYPE_WORKER) continue;
      RegisterRequest request;
      *request.mutable_task() = task;
      request.set_incarnation(1);
      ASSERT_TRUE(coordinator_->coordinator().Register(request).ok());
    }
  }

  std::vector<TaskId> Peers() const {
    return {Task(TASK_TYPE_PS, 0), Task(TASK_TYPE_PS, 1), Task(TASK_TYPE_WORKER, 0),
            Task(TASK_TYPE_WORKER, 1), Task(TASK_TYPE_WORKER, 2)};
  }

  // Waits until the job hands out its assignments, as worker/0 sees them.
  void AwaitRunning() {
    absl::StatusOr<Assignment> assignment =
        coordinator_->AwaitAssignment(Task(TASK_TYPE_WORKER, 0), 1, kWait);
    ASSERT_TRUE(assignment.ok()) << assignment.status();
    ASSERT_EQ(assignment->job_id(), job_id_);
  }

  // The coordinator's view of the client's task; a default Member when
  // unlisted.
  Member Listed() {
    const ClusterStatus cluster = coordinator_->coordinator().GetCluster();
    for (const Member& member : cluster.members()) {
      if (member.task().type() == TASK_TYPE_WORKER && member.task().index() == kClientIndex) {
        return member;
      }
    }
    return Member();
  }

  // The client misses its heartbeat deadline on the coordinator's clock
  // while every peer keeps its own: the coordinator marks the client lost
  // (its calls are Aborted until it registers again). Time moves in small
  // steps, the peers beating at each, until the coordinator's ticker has
  // seen the client's deadline pass.
  void LoseClient() {
    const absl::Time give_up = absl::Now() + kWait;
    while (Listed().state() != MEMBER_STATE_LOST && absl::Now() < give_up) {
      // One heartbeat interval at a time, the peers beating each: a
      // coordinator that hears nobody for two intervals takes itself for
      // the one cut off and marks nobody lost.
      coordinator_->clock().Advance(absl::Milliseconds(50));
      for (const TaskId& task : Peers()) {
        HeartbeatRequest beat;
        *beat.mutable_task() = task;
        beat.set_incarnation(1);
        ASSERT_TRUE(coordinator_->coordinator().Heartbeat(beat).ok());
      }
      absl::SleepFor(absl::Milliseconds(1));  // the ticker runs on its own thread
    }
    ASSERT_EQ(Listed().state(), MEMBER_STATE_LOST);
  }

  ProgressReport Report(int64_t steps, int64_t version_seen) {
    ProgressReport report;
    report.set_job_id(job_id_);
    report.set_steps(steps);
    report.set_parameter_version(version_seen);
    return report;
  }

  PosixEnv env_;
  std::string root_;
  SeededRandom random_{5};
  FakeClock clock_;
  std::unique_ptr<InProcessCoordinator> coordinator_;
  CoordinatorCallLog calls_;
  // The channel of the newest client.
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<CoordinatorClient> client_;
  std::string job_id_;
};

TEST_F(CoordinatorClientTest, RegistersWithANonZeroIncarnation) {
  ASSERT_TRUE(client_->member().Register().ok());
  EXPECT_NE(client_->member().incarnation(), 0u);
  EXPECT_EQ(Listed().incarnation(), client_->member().incarnation());
  EXPECT_EQ(calls_.Count("Register"), 1u);
}

TEST_F(CoordinatorClientTest, ReregistersWithTheSameIncarnationWhenAborted) {
  ASSERT_TRUE(client_->member().Register().ok());
  ASSERT_NO_FATAL_FAILURE(StartJob());
  ASSERT_NO_FATAL_FAILURE(LoseClient());
  absl::StatusOr<Assignment> assignment =
      client_->member().GetAssignment("", 0, absl::Milliseconds(100));
  ASSERT_TRUE(assignment.ok()) << assignment.status();
  EXPECT_EQ(assignment->job_id(), job_id_);
  EXPECT_EQ(calls_.Count("Register"), 2u);
  EXPECT_EQ(Listed().incarnation(), client_->member().incarnation());
  EXPECT_NE(Listed().state(), MEMBER_STATE_LOST);
}

TEST_F(CoordinatorClientTest, CarriesOnAfterTheCoordinatorForgetsItsMembers) {
  ASSERT_TRUE(client_->member().Register().ok());
  ASSERT_NO_FATAL_FAILURE(StartJob());
  coordinator_->Restart();  // it has forgotten every member; the job starts again
  ASSERT_NO_FATAL_FAILURE(RegisterPeers());
  ASSERT_TRUE(channel_->WaitForConnected(absl::ToChronoTime(absl::Now() + kWait)));
  // The client registers again on its own; the job waits for it to start.
  absl::StatusOr<DataLease> lease = client_->AcquireDataLease(job_id_);
  if (!lease.ok()) {
    // The resumed job is queued (JOB_NOT_STARTED) until the coordinator
    // starts it, then waits for its members (JOB_STARTING).
    const ErrorReason reason = ReasonOf(lease.status());
    EXPECT_TRUE(reason == ERROR_REASON_JOB_STARTING || reason == ERROR_REASON_JOB_NOT_STARTED)
        << lease.status();
    ASSERT_NO_FATAL_FAILURE(AwaitRunning());
    lease = client_->AcquireDataLease(job_id_);
  }
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_FALSE(lease->end_of_data());
  EXPECT_EQ(lease->range().end() - lease->range().begin(), kRecordsPerLease);
  EXPECT_EQ(calls_.Count("Register"), 2u);
  EXPECT_EQ(Listed().incarnation(), client_->member().incarnation());
}

TEST_F(CoordinatorClientTest, HeartbeatsReregisterAndReportTheJob) {
  ASSERT_TRUE(client_->member().Register().ok());
  ASSERT_NO_FATAL_FAILURE(StartJob());
  // Heartbeats pause on the fake clock, which returns at once: use a real
  // one for the thread.
  RealClock real;
  std::unique_ptr<CoordinatorClient> client = NewClient(real, client_->member().incarnation());
  ASSERT_TRUE(client->member().Register().ok());
  client->member().StartHeartbeats();
  HeartbeatView view = client->member().WaitForHeartbeat(0, kWait);
  EXPECT_EQ(view.job_id, job_id_);
  const size_t registrations = calls_.Count("Register");
  coordinator_->Restart();  // it has forgotten every member
  for (int i = 0; i < 1000 && client->member().reregistrations() == 0; ++i) {
    view = client->member().WaitForHeartbeat(view.answers, kWait);
  }
  EXPECT_GT(view.answers, 1);
  EXPECT_GT(calls_.Count("Register"), registrations);
  EXPECT_EQ(Listed().incarnation(), client_->member().incarnation());
  ShutdownRequest shutdown;
  shutdown.set_stop_running_job(true);
  ASSERT_TRUE(coordinator_->coordinator().Shutdown(shutdown).ok());
  for (int i = 0; i < 1000 && !view.shutdown; ++i) {
    view = client->member().WaitForHeartbeat(view.answers, kWait);
  }
  EXPECT_TRUE(view.shutdown);
}

TEST_F(CoordinatorClientTest, AnUnsentProgressReportIsKeptAndSentFirst) {
  ASSERT_TRUE(client_->member().Register().ok());
  ASSERT_NO_FATAL_FAILURE(StartJob());
  ASSERT_TRUE(client_->ReportProgress(Report(10, 0)).ok());

  // The coordinator is unreachable past the retry deadline: the second
  // report is kept.
  coordinator_->Stop();
  EXPECT_TRUE(absl::IsDeadlineExceeded(client_->ReportProgress(Report(20, 0)).status()));

  // Back, and the job runs again: the kept report goes first, with its
  // content.
  coordinator_->Restart();
  ASSERT_NO_FATAL_FAILURE(RegisterPeers());
  // The client's retries take no real time: let its channel reconnect
  // first.
  ASSERT_TRUE(channel_->WaitForConnected(absl::ToChronoTime(absl::Now() + kWait)));
  ASSERT_TRUE(client_->member().Register().ok());
  ASSERT_NO_FATAL_FAILURE(AwaitRunning());
  ASSERT_TRUE(client_->ReportProgress(Report(30, 0)).ok());
  std::vector<ProgressReport> reports = calls_.Requests<ProgressReport>("ReportProgress");
  ASSERT_EQ(reports.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(reports[i].steps(), 10 * (i + 1));
    EXPECT_EQ(reports[i].incarnation(), client_->member().incarnation());
    EXPECT_EQ(reports[i].task().index(), kClientIndex);
    EXPECT_EQ(reports[i].job_id(), job_id_);
  }
}

TEST_F(CoordinatorClientTest, ARetriedReportRaisesTheGlobalStepOnce) {
  ASSERT_TRUE(client_->member().Register().ok());
  ASSERT_NO_FATAL_FAILURE(StartJob());
  absl::StatusOr<ProgressResponse> response = client_->ReportProgress(Report(5, 5));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->global_step(), 5);
  // Aborted once (the client was marked lost): it registers again and
  // resends a report of the same version, which counts nothing twice.
  ASSERT_NO_FATAL_FAILURE(LoseClient());
  response = client_->ReportProgress(Report(5, 5));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->global_step(), 5);
  EXPECT_EQ(calls_.Count("Register"), 2u);
  EXPECT_EQ(calls_.Requests<ProgressReport>("ReportProgress").size(), 2u);
}

TEST_F(CoordinatorClientTest, EndedJobIsFailedPrecondition) {
  ASSERT_TRUE(client_->member().Register().ok());
  ASSERT_NO_FATAL_FAILURE(StartJob());
  StopJobRequest stop;
  stop.set_job_id(job_id_);
  stop.set_immediately(true);
  ASSERT_TRUE(coordinator_->coordinator().StopJob(stop).ok());
  absl::Status status = client_->ReportProgress(Report(1, 1)).status();
  // Until the job has ended, the coordinator may still answer stop.
  const absl::Time give_up = absl::Now() + kWait;
  while (status.ok() && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));
    status = client_->ReportProgress(Report(0, 0)).status();
  }
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_EQ(ReasonOf(status), ERROR_REASON_JOB_ENDED) << status;
}

TEST_F(CoordinatorClientTest, CompletesLeasesWithReturnedRecords) {
  ASSERT_TRUE(client_->member().Register().ok());
  ASSERT_NO_FATAL_FAILURE(StartJob());
  absl::StatusOr<DataLease> lease = client_->AcquireDataLease(job_id_);
  ASSERT_TRUE(lease.ok()) << lease.status();
  const int64_t begin = lease->range().begin();
  RecordRange returned;
  returned.set_begin(begin + 10);
  returned.set_end(begin + 20);
  ASSERT_TRUE(client_->CompleteDataLease(job_id_, lease->lease_id(), {returned}).ok());
  std::vector<CompleteDataLeaseRequest> completions =
      calls_.Requests<CompleteDataLeaseRequest>("CompleteDataLease");
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0].lease_id(), lease->lease_id());
  EXPECT_EQ(completions[0].job_id(), job_id_);
  ASSERT_EQ(completions[0].returned_size(), 1);
  EXPECT_EQ(completions[0].returned(0).begin(), begin + 10);
  EXPECT_EQ(completions[0].returned(0).end(), begin + 20);
  // The returned records are the next ones handed out.
  absl::StatusOr<DataLease> next = client_->AcquireDataLease(job_id_);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->range().begin(), begin + 10);
  EXPECT_EQ(next->range().end(), begin + 20);
  // A lease completed already is unknown.
  EXPECT_TRUE(absl::IsNotFound(client_->CompleteDataLease(job_id_, lease->lease_id(), {})));
}

TEST_F(CoordinatorClientTest, UnreachableCoordinatorGivesUpAtTheRetryDeadline) {
  coordinator_->Stop();
  absl::Status status = client_->member().Register();
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("coordinator"));
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
