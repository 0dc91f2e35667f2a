// The member loop against the real coordinator, served in this process on
// 127.0.0.1, driving a role that records what it is asked to do. The
// session's clock jumps to every deadline, so pauses and heartbeat
// intervals take no real time; the coordinator's own clock moves only when
// a test advances it.

#include "common/cluster/member_loop.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/clock/fake_clock.h"
#include "common/status/error_reason.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "server/coordinator/testing/in_process_coordinator.h"

namespace pstrain {
namespace {

using coordinator::InProcessCoordinator;

constexpr absl::Duration kWait = absl::Seconds(30);

// A role that answers each assignment with the next of `outcomes` (OK once
// they run out) and says step 17 of itself.
class RecordingRole : public MemberRole {
 public:
  explicit RecordingRole(std::vector<absl::Status> outcomes) : outcomes_(std::move(outcomes)) {}

  absl::Status RunAssignment(const Assignment& assignment) override {
    absl::MutexLock lock(&mu_);
    runs_.push_back(assignment);
    absl::Status outcome =
        runs_.size() <= outcomes_.size() ? outcomes_[runs_.size() - 1] : absl::OkStatus();
    return outcome;
  }
  void DescribeSelf(HeartbeatRequest* beat) override { beat->set_step(17); }
  void ShutDown() override {
    ++shutdowns_;
    if (on_shutdown_) on_shutdown_();
  }

  // Blocks until `n` runs have begun.
  void AwaitRuns(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return runs_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), kWait);
  }
  std::vector<Assignment> runs() {
    absl::MutexLock lock(&mu_);
    return runs_;
  }

  std::function<void()> on_shutdown_;
  std::atomic<int> shutdowns_{0};

 private:
  const std::vector<absl::Status> outcomes_;
  absl::Mutex mu_;
  std::vector<Assignment> runs_ ABSL_GUARDED_BY(mu_);
};

class MemberLoopTest : public ::testing::Test {
 protected:
  MemberLoopTest() {
    root_ = NewTestDir(env_);
    coordinator::CoordinatorOptions options;
    options.checkpoint_root = root_;
    options.runner.num_ps = 2;
    options.runner.num_workers = 1;
    coordinator_ = std::make_unique<InProcessCoordinator>(options);
    clock_.JumpToDeadlines();
  }

  // worker/0, whose loop is the test's.
  std::unique_ptr<MemberSession> NewSession() {
    MemberSessionOptions options;
    options.task.set_type(TASK_TYPE_WORKER);
    options.task.set_index(0);
    options.coordinator_address = coordinator_->address();
    options.retry.deadline = absl::Seconds(20);
    absl::StatusOr<std::unique_ptr<MemberSession>> session = MemberSession::Create(
        grpc::CreateChannel(coordinator_->address(), grpc::InsecureChannelCredentials()),
        std::move(options), MemberSession::NewIncarnation(random_), clock_, random_);
    EXPECT_TRUE(session.ok()) << session.status();
    return *std::move(session);
  }

  static MemberLoopOptions LoopOptions() {
    MemberLoopOptions options;
    options.assignment_wait = absl::Seconds(1);
    options.pauses.initial_backoff = absl::Milliseconds(5);
    return options;
  }

  // Submits a training job and registers its parameter servers; it starts
  // once worker/0 registers.
  std::string SubmitJob() {
    InProcessCoordinator::TrainingJob job;
    job.model_dir = JoinPath(root_, "model");
    job.num_examples = 1000;
    absl::StatusOr<std::string> job_id = coordinator_->SubmitTrainingJob(job);
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    return job_id.value_or("");
  }

  // The coordinator's view of worker/0; a default Member when unlisted.
  Member Listed() {
    const ClusterStatus cluster = coordinator_->coordinator().GetCluster();
    for (const Member& member : cluster.members()) {
      if (member.task().type() == TASK_TYPE_WORKER && member.task().index() == 0) return member;
    }
    return Member();
  }

  PosixEnv env_;
  std::string root_;
  std::unique_ptr<InProcessCoordinator> coordinator_;
  FakeClock clock_;
  SeededRandom random_{5};
};

TEST(MemberRefusalTest, OnlyAReplacedProcessAWrongRequestOrACancelAreFinal) {
  EXPECT_TRUE(IsFinalRefusal(
      WithReason(absl::FailedPreconditionError("newer process"), ERROR_REASON_PROCESS_REPLACED)));
  EXPECT_TRUE(IsFinalRefusal(absl::InvalidArgumentError("bad task")));
  EXPECT_TRUE(IsFinalRefusal(absl::CancelledError("stopped")));
  // For now: the coordinator is away, another process holds the index
  // until its heartbeats lapse, or the coordinator forgot this member.
  EXPECT_FALSE(IsFinalRefusal(absl::DeadlineExceededError("gave up waiting")));
  EXPECT_FALSE(IsFinalRefusal(absl::UnavailableError("connection refused")));
  EXPECT_FALSE(IsFinalRefusal(absl::AlreadyExistsError("held by a live process")));
  EXPECT_FALSE(
      IsFinalRefusal(WithReason(absl::NotFoundError("unknown"), ERROR_REASON_MEMBER_UNKNOWN)));
  EXPECT_FALSE(IsFinalRefusal(absl::OkStatus()));
}

TEST_F(MemberLoopTest, RunsEachRunOnceAndTakesAVoidedOneUpAgain) {
  const std::string job_id = SubmitJob();
  std::unique_ptr<MemberSession> session = NewSession();
  RecordingRole role({WithReason(absl::FailedPreconditionError("the run rolled back"),
                                 ERROR_REASON_RUN_ROLLED_BACK),
                      absl::InternalError("a run that failed here")});
  MemberLoop loop(*session, role, LoopOptions());
  absl::Status result;
  std::thread runner([&] { result = loop.Run(); });
  // Voided, failed, then done: three runs of the same assignment, and no
  // fourth while it stays the job's current one.
  role.AwaitRuns(3);
  session->Cancel();
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  const std::vector<Assignment> runs = role.runs();
  ASSERT_EQ(runs.size(), 3u);
  for (const Assignment& run : runs) {
    EXPECT_EQ(run.job_id(), job_id);
    EXPECT_EQ(run.generation(), runs[0].generation());
  }
  EXPECT_FALSE(loop.shutdown_requested());
}

TEST_F(MemberLoopTest, AReplacedProcessEndsWithTheRefusalAndRunsNothing) {
  std::unique_ptr<MemberSession> session = NewSession();
  ASSERT_TRUE(session->Register().ok());
  // A newer process of worker/0 registers: this one is stale.
  RegisterRequest newer;
  newer.mutable_task()->set_type(TASK_TYPE_WORKER);
  newer.set_incarnation(session->incarnation() + 1);
  ASSERT_TRUE(coordinator_->coordinator().Register(newer).ok());
  RecordingRole role({});
  MemberLoop loop(*session, role, LoopOptions());
  const absl::Status result = loop.Run();
  EXPECT_TRUE(absl::IsFailedPrecondition(result)) << result;
  EXPECT_EQ(ReasonOf(result), ERROR_REASON_PROCESS_REPLACED) << result;
  EXPECT_TRUE(role.runs().empty());
}

TEST_F(MemberLoopTest, AnUnreachableCoordinatorIsWaitedForUntilStopped) {
  coordinator_->Stop();
  std::unique_ptr<MemberSession> session = NewSession();
  RecordingRole role({});
  MemberLoop loop(*session, role, LoopOptions());
  absl::Status result;
  std::thread runner([&] { result = loop.Run(); });
  // Far past the session's retry deadline of 20 s: registering goes on.
  while (clock_.slept() < absl::Minutes(2)) std::this_thread::yield();
  session->Cancel();
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_TRUE(role.runs().empty());
}

TEST_F(MemberLoopTest, HeartbeatsSpeakForTheRoleAndTheShutdownReachesIt) {
  std::unique_ptr<MemberSession> session = NewSession();
  RecordingRole role({});
  // As the evaluator does: end the session, and with it the long poll.
  role.on_shutdown_ = [&session] { session->Cancel(); };
  MemberLoop loop(*session, role, LoopOptions());
  absl::Status result;
  std::thread runner([&] { result = loop.Run(); });
  HeartbeatView view = session->WaitForHeartbeat(0, kWait);
  ASSERT_GE(view.answers, 1);
  EXPECT_EQ(Listed().step(), 17);
  ASSERT_TRUE(coordinator_->coordinator().Shutdown(ShutdownRequest()).ok());
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_TRUE(loop.shutdown_requested());
  EXPECT_EQ(role.shutdowns_.load(), 1);
  EXPECT_TRUE(role.runs().empty());
}

}  // namespace
}  // namespace pstrain
