#include "server/coordinator/membership_registry.h"
#include "server/coordinator/task_name.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

const TaskId kPs0 = MakeTask(TASK_TYPE_PS, 0);
const TaskId kPs1 = MakeTask(TASK_TYPE_PS, 1);
const TaskId kWorker0 = MakeTask(TASK_TYPE_WORKER, 0);
const TaskId kWorker1 = MakeTask(TASK_TYPE_WORKER, 1);
const TaskId kEvaluator0 = MakeTask(TASK_TYPE_EVALUATOR, 0);

class MembershipRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<MembershipRegistry>> registry =
        MembershipRegistry::Create(clock_);
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = std::move(*registry);
  }

  FakeClock clock_;
  std::unique_ptr<MembershipRegistry> registry_;
};

TEST_F(MembershipRegistryTest, DefaultsAreDocumented) {
  EXPECT_EQ(registry_->options().heartbeat_interval, absl::Seconds(2));
  EXPECT_EQ(registry_->options().heartbeat_timeout, absl::Seconds(10));
}

TEST_F(MembershipRegistryTest, RefusesOptionsThatWouldDeclareHealthyMembersLost) {
  MembershipOptions options;
  options.heartbeat_interval = absl::Seconds(5);
  options.heartbeat_timeout = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<MembershipRegistry>> registry =
      MembershipRegistry::Create(clock_, options);
  EXPECT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(registry.status().message(), HasSubstr("must exceed the heartbeat interval"));
}

TEST_F(MembershipRegistryTest, RegisterRecordsAnIdleMember) {
  absl::StatusOr<RegisterResult> result =
      registry_->Register(kPs1, 42, "localhost:7001", "localhost:9001");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->replaced_incarnation, 0u);
  const Member& member = result->member;
  EXPECT_EQ(member.task().index(), 1);
  EXPECT_EQ(member.incarnation(), 42u);
  EXPECT_EQ(member.state(), MEMBER_STATE_IDLE);
  EXPECT_EQ(member.address(), "localhost:7001");
  EXPECT_EQ(member.metrics_address(), "localhost:9001");
  EXPECT_EQ(member.registered_unix_ms(), absl::ToUnixMillis(clock_.Now()));
  EXPECT_EQ(member.last_heartbeat_unix_ms(), absl::ToUnixMillis(clock_.Now()));
}

TEST_F(MembershipRegistryTest, RefusesBadRegistrationsWithInvalidArgument) {
  struct Case {
    TaskId task;
    uint64_t incarnation;
    const char* address;
    const char* message;
  };
  const Case cases[] = {
      {MakeTask(TASK_TYPE_UNSPECIFIED, 0), 1, "", "not one of ps, worker or evaluator"},
      {MakeTask(TASK_TYPE_CHIEF, 0), 1, "", "the coordinator is the chief"},
      {MakeTask(TASK_TYPE_WORKER, -1), 1, "", "must be in [0, 4096)"},
      {MakeTask(TASK_TYPE_WORKER, 4096), 1, "", "must be in [0, 4096)"},
      {kWorker0, 0, "", "incarnation must be non-zero"},
      {kWorker0, 1, "no-port", "address"},
      {kPs0, 1, "", "must register the address"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<RegisterResult> result =
        registry_->Register(c.task, c.incarnation, c.address, "");
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(result.status().message(), HasSubstr(c.message));
  }
  EXPECT_THAT(registry_->Members(), IsEmpty());
}

TEST_F(MembershipRegistryTest, RegisteringTheSameIncarnationAgainIsARetry) {
  ASSERT_TRUE(registry_->Register(kWorker0, 7, "", "").ok());
  ASSERT_TRUE(registry_->SetJob(kWorker0, 7, "mnist-1").ok());
  clock_.Advance(absl::Seconds(3));
  absl::StatusOr<RegisterResult> again = registry_->Register(kWorker0, 7, "", "");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->replaced_incarnation, 0u);
  EXPECT_EQ(again->member.state(), MEMBER_STATE_BUSY);
  EXPECT_EQ(again->member.job_id(), "mnist-1");
}

TEST_F(MembershipRegistryTest, NewIncarnationReplacesTheOldAndVoidsItsWork) {
  ASSERT_TRUE(registry_->Register(kWorker0, 7, "", "").ok());
  ASSERT_TRUE(registry_->SetJob(kWorker0, 7, "mnist-1").ok());

  absl::StatusOr<RegisterResult> restarted = registry_->Register(kWorker0, 8, "", "");
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  EXPECT_EQ(restarted->replaced_incarnation, 7u);
  EXPECT_EQ(restarted->member.incarnation(), 8u);
  EXPECT_EQ(restarted->member.state(), MEMBER_STATE_IDLE);
  EXPECT_EQ(restarted->member.job_id(), "");
  EXPECT_THAT(registry_->Members(), SizeIs(1));
}

TEST_F(MembershipRegistryTest, StaleIncarnationIsAbortedEverywhere) {
  ASSERT_TRUE(registry_->Register(kWorker0, 7, "", "").ok());
  ASSERT_TRUE(registry_->Register(kWorker0, 8, "", "").ok());

  absl::Status heartbeat = registry_->Heartbeat(kWorker0, 7);
  EXPECT_EQ(heartbeat.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(heartbeat.message(), HasSubstr("the task restarted with a new incarnation"));
  EXPECT_EQ(registry_->CheckCaller(kWorker0, 7).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(registry_->SetJob(kWorker0, 7, "mnist-1").code(), absl::StatusCode::kAborted);
  EXPECT_EQ(registry_->Leave(kWorker0, 7).code(), absl::StatusCode::kAborted);
  // The stale calls changed nothing.
  absl::StatusOr<Member> member = registry_->Get(kWorker0);
  ASSERT_TRUE(member.ok());
  EXPECT_EQ(member->incarnation(), 8u);
  EXPECT_EQ(member->state(), MEMBER_STATE_IDLE);
}

TEST_F(MembershipRegistryTest, ReplacedIncarnationCannotTakeItsTaskBack) {
  ASSERT_TRUE(registry_->Register(kWorker0, 7, "", "").ok());
  ASSERT_TRUE(registry_->Register(kWorker0, 8, "", "").ok());
  absl::StatusOr<RegisterResult> stale = registry_->Register(kWorker0, 7, "", "");
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(stale.status().message(), HasSubstr("stale and should exit"));
  EXPECT_TRUE(registry_->Heartbeat(kWorker0, 8).ok());
}

TEST_F(MembershipRegistryTest, SecondLiveProcessAtAnotherAddressIsRefused) {
  ASSERT_TRUE(registry_->Register(kPs1, 7, "hosta:7001", "").ok());
  absl::StatusOr<RegisterResult> other = registry_->Register(kPs1, 9, "hostb:7001", "");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(other.status().message(), HasSubstr("ps/1 is held by a live process at hosta:7001"));

  // Once the first is lost, the task is free for the new process.
  clock_.Advance(absl::Seconds(11));
  ASSERT_THAT(registry_->CheckDeadlines(), SizeIs(1));
  absl::StatusOr<RegisterResult> after = registry_->Register(kPs1, 9, "hostb:7001", "");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->replaced_incarnation, 7u);
}

TEST_F(MembershipRegistryTest, RestartAtTheSameAddressReplacesAtOnce) {
  ASSERT_TRUE(registry_->Register(kPs1, 7, "hosta:7001", "").ok());
  absl::StatusOr<RegisterResult> restarted = registry_->Register(kPs1, 9, "hosta:7001", "");
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  EXPECT_EQ(restarted->replaced_incarnation, 7u);
}

TEST_F(MembershipRegistryTest, UnknownTaskIsNotFound) {
  absl::Status status = registry_->Heartbeat(kWorker1, 3);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("worker/1 is not registered"));
  EXPECT_EQ(registry_->Get(kWorker1).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(MembershipRegistryTest, SilentMemberIsLostOnceAndHeartbeatsKeepOthersAlive) {
  ASSERT_TRUE(registry_->Register(kWorker0, 1, "", "").ok());
  ASSERT_TRUE(registry_->Register(kWorker1, 2, "", "").ok());
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(absl::Seconds(2));
    ASSERT_TRUE(registry_->Heartbeat(kWorker1, 2).ok());
    EXPECT_THAT(registry_->CheckDeadlines(), IsEmpty()) << "after " << 2 * (i + 1) << "s";
  }
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(registry_->Heartbeat(kWorker1, 2).ok());
  // worker/0 has been silent 12s > 10s.
  std::vector<Member> lost = registry_->CheckDeadlines();
  ASSERT_THAT(lost, SizeIs(1));
  EXPECT_EQ(lost[0].task().index(), 0);
  EXPECT_EQ(lost[0].state(), MEMBER_STATE_LOST);
  EXPECT_THAT(registry_->CheckDeadlines(), IsEmpty());  // reported once
  EXPECT_EQ(registry_->Count(TASK_TYPE_WORKER, MEMBER_STATE_LOST), 1);
  EXPECT_EQ(registry_->Count(TASK_TYPE_WORKER, MEMBER_STATE_IDLE), 1);
}

TEST_F(MembershipRegistryTest, SilenceUpToTheTimeoutIsNotLoss) {
  ASSERT_TRUE(registry_->Register(kWorker0, 1, "", "").ok());
  clock_.Advance(absl::Seconds(10));
  EXPECT_THAT(registry_->CheckDeadlines(), IsEmpty());
}

TEST_F(MembershipRegistryTest,
       SilenceOfEveryMemberMarksNoneLostAndTheFirstHeardGivesAllAFreshDeadline) {
  // The coordinator's own host cut off: it hears from none of them.
  ASSERT_TRUE(registry_->Register(kPs0, 1, "h:1", "").ok());
  ASSERT_TRUE(registry_->Register(kWorker0, 2, "", "").ok());
  clock_.Advance(absl::Seconds(30));
  EXPECT_THAT(registry_->CheckDeadlines(), IsEmpty());
  EXPECT_EQ(registry_->Count(TASK_TYPE_PS, MEMBER_STATE_IDLE), 1);

  // Back: worker/0 is heard first; ps/0, whose heartbeat has yet to get
  // through, has as long as the silence lasted (30s) from now.
  ASSERT_TRUE(registry_->Heartbeat(kWorker0, 2).ok());
  EXPECT_THAT(registry_->CheckDeadlines(), IsEmpty());
  for (int i = 0; i < 14; ++i) {
    clock_.Advance(absl::Seconds(2));
    ASSERT_TRUE(registry_->Heartbeat(kWorker0, 2).ok());
    EXPECT_THAT(registry_->CheckDeadlines(), IsEmpty()) << "after " << 2 * (i + 1) << "s";
  }
  ASSERT_TRUE(registry_->Heartbeat(kPs0, 1).ok());

  // A member that stays silent while others are heard is lost as ever.
  for (int i = 0; i < 6; ++i) {
    clock_.Advance(absl::Seconds(2));
    ASSERT_TRUE(registry_->Heartbeat(kPs0, 1).ok());
  }
  std::vector<Member> lost = registry_->CheckDeadlines();
  ASSERT_THAT(lost, SizeIs(1));
  EXPECT_EQ(lost[0].task().type(), TASK_TYPE_WORKER);
}

TEST_F(MembershipRegistryTest, AMemberWhoseLastBeatCameJustBeforeACutIsNotLostFirst) {
  // worker/0 beat 1.5 s before the coordinator was cut off, ps/0 just
  // before: worker/0's deadline passes while ps/0's last beat is only
  // 8.5 s old. The silence of both since the cut must already hold it.
  ASSERT_TRUE(registry_->Register(kWorker0, 2, "", "").ok());
  clock_.Advance(absl::Milliseconds(1500));
  ASSERT_TRUE(registry_->Register(kPs0, 1, "h:1", "").ok());
  clock_.Advance(absl::Seconds(4));
  EXPECT_THAT(registry_->CheckDeadlines(), IsEmpty());  // silent 4 s: held
  clock_.Advance(absl::Milliseconds(6000));             // worker/0: 11.5 s
  EXPECT_THAT(registry_->CheckDeadlines(), IsEmpty());
  EXPECT_EQ(registry_->Count(TASK_TYPE_WORKER, MEMBER_STATE_IDLE), 1);
}

TEST_F(MembershipRegistryTest, ASoleMemberSilentPastTheTimeoutIsLost) {
  ASSERT_TRUE(registry_->Register(kPs0, 1, "h:1", "").ok());
  clock_.Advance(absl::Seconds(11));
  EXPECT_THAT(registry_->CheckDeadlines(), SizeIs(1));
}

TEST_F(MembershipRegistryTest, LostMemberMustRegisterAgain) {
  ASSERT_TRUE(registry_->Register(kWorker0, 1, "", "").ok());
  ASSERT_TRUE(registry_->SetJob(kWorker0, 1, "mnist-1").ok());
  clock_.Advance(absl::Seconds(11));
  ASSERT_THAT(registry_->CheckDeadlines(), SizeIs(1));

  absl::Status heartbeat = registry_->Heartbeat(kWorker0, 1);
  EXPECT_EQ(heartbeat.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(heartbeat.message(), HasSubstr("marked lost after 10s"));

  absl::StatusOr<RegisterResult> back = registry_->Register(kWorker0, 1, "", "");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->member.state(), MEMBER_STATE_IDLE);
  EXPECT_EQ(back->member.job_id(), "");  // its work went to others
  EXPECT_TRUE(registry_->Heartbeat(kWorker0, 1).ok());
}

TEST_F(MembershipRegistryTest, LeftMemberIsNeverLost) {
  ASSERT_TRUE(registry_->Register(kEvaluator0, 5, "", "").ok());
  ASSERT_TRUE(registry_->Leave(kEvaluator0, 5).ok());
  clock_.Advance(absl::Minutes(5));
  EXPECT_THAT(registry_->CheckDeadlines(), IsEmpty());
  EXPECT_EQ(registry_->Count(TASK_TYPE_EVALUATOR, MEMBER_STATE_LEFT), 1);
  EXPECT_EQ(registry_->Heartbeat(kEvaluator0, 5).code(), absl::StatusCode::kAborted);
}

TEST_F(MembershipRegistryTest, LeavingAgainOrAfterBeingLostIsLeaving) {
  ASSERT_TRUE(registry_->Register(kEvaluator0, 5, "", "").ok());
  ASSERT_TRUE(registry_->Leave(kEvaluator0, 5).ok());
  EXPECT_TRUE(registry_->Leave(kEvaluator0, 5).ok());  // a retry

  ASSERT_TRUE(registry_->Register(kWorker0, 7, "", "").ok());
  clock_.Advance(absl::Minutes(1));
  ASSERT_THAT(registry_->CheckDeadlines(), SizeIs(1));
  EXPECT_TRUE(registry_->Leave(kWorker0, 7).ok());
  EXPECT_EQ(registry_->Count(TASK_TYPE_WORKER, MEMBER_STATE_LEFT), 1);
  EXPECT_EQ(registry_->Leave(kWorker0, 8).code(), absl::StatusCode::kAborted);
}

TEST_F(MembershipRegistryTest, SetJobMakesAMemberBusyAndBackIdle) {
  ASSERT_TRUE(registry_->Register(kWorker0, 1, "", "").ok());
  ASSERT_TRUE(registry_->SetJob(kWorker0, 1, "mnist-1").ok());
  EXPECT_EQ(registry_->Count(TASK_TYPE_WORKER, MEMBER_STATE_BUSY), 1);
  EXPECT_EQ(registry_->Get(kWorker0)->job_id(), "mnist-1");
  ASSERT_TRUE(registry_->SetJob(kWorker0, 1, "").ok());
  EXPECT_EQ(registry_->Count(TASK_TYPE_WORKER, MEMBER_STATE_IDLE), 1);
}

TEST_F(MembershipRegistryTest, MembersAreOrderedByRoleAndIndex) {
  ASSERT_TRUE(registry_->Register(kWorker1, 1, "", "").ok());
  ASSERT_TRUE(registry_->Register(kPs1, 2, "h:1", "").ok());
  ASSERT_TRUE(registry_->Register(kWorker0, 3, "", "").ok());
  ASSERT_TRUE(registry_->Register(kPs0, 4, "h:2", "").ok());
  std::vector<Member> members = registry_->Members();
  ASSERT_THAT(members, SizeIs(4));
  EXPECT_EQ(members[0].incarnation(), 4u);
  EXPECT_EQ(members[1].incarnation(), 2u);
  EXPECT_EQ(members[2].incarnation(), 3u);
  EXPECT_EQ(members[3].incarnation(), 1u);
}

TEST_F(MembershipRegistryTest, MissingTasksNamesWhatAJobWaitsFor) {
  ASSERT_TRUE(registry_->Register(kPs0, 1, "h:1", "").ok());
  ASSERT_TRUE(registry_->Register(kPs1, 2, "h:2", "").ok());
  for (int i = 0; i < 6; ++i) {  // ps/0 beats, ps/1 is silent 12 s
    clock_.Advance(absl::Seconds(2));
    ASSERT_TRUE(registry_->Heartbeat(kPs0, 1).ok());
  }
  ASSERT_THAT(registry_->CheckDeadlines(), SizeIs(1));  // ps/1
  std::vector<TaskId> missing = registry_->MissingTasks(TASK_TYPE_PS, 3);
  ASSERT_THAT(missing, SizeIs(2));
  EXPECT_EQ(missing[0].index(), 1);
  EXPECT_EQ(missing[1].index(), 2);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
