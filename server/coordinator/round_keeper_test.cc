#include "server/coordinator/round_keeper.h"

#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/checkpoint/posix_env.h"
#include "common/clock/clock.h"
#include "common/status/error_reason.h"
#include "gtest/gtest.h"
#include "server/coordinator/testing/fake_shard.h"
#include "server/coordinator/testing/round_join_answer.h"

namespace pstrain {
namespace coordinator {
namespace {

constexpr absl::Duration kTimeout = absl::Seconds(30);

// A worker's push as the keeper sees it: rank, the process's registration,
// the push's incarnation and sequence.
struct Push {
  int rank = 0;
  uint64_t incarnation = 1;
  uint64_t push_incarnation = 100;
  uint64_t sequence = 1;
};

class RoundKeeperTest : public ::testing::Test {
 protected:
  RoundKeeperTest() {
    generation_.Connect(FakeShardGroup({&shards_[0], &shards_[1]}), {1, 1});
    control_.Start(std::make_shared<StartedJob>());
  }

  // Opens rounds of `members` of `workers` from round `start`.
  void Open(int workers, int members, int64_t start, int64_t max_steps = 0) {
    step_ = std::make_unique<GlobalStep>(start);
    RoundPlan plan;
    plan.max_workers = workers;
    plan.members_per_round = members;
    plan.max_steps = max_steps;
    plan.step = step_.get();
    plan.committed = [this](int64_t step) { committed_.push_back(step); };
    keeper_.Open(std::move(plan), start);
  }

  std::shared_ptr<RoundJoinAnswer> Join(const Push& push, int64_t round) {
    JoinRoundRequest request;
    request.mutable_task()->set_type(TASK_TYPE_WORKER);
    request.mutable_task()->set_index(push.rank);
    request.set_incarnation(push.incarnation);
    request.set_job_id("job-1");
    request.set_generation(generation_.number());
    request.set_round(round);
    request.set_push_incarnation(push.push_incarnation);
    request.set_push_sequence(push.sequence);
    auto answer = std::make_shared<RoundJoinAnswer>();
    keeper_.Join(request, RoundJoinAnswer::To(answer));
    return answer;
  }

  static RoundKeeperOptions FastRetry() {
    RoundKeeperOptions options;
    options.commit_retry.initial_backoff = absl::Milliseconds(1);
    options.commit_retry.max_backoff = absl::Milliseconds(5);
    return options;
  }

  RealClock clock_;
  PosixEnv env_;
  FakeShard shards_[2] = {FakeShard(env_, "ps-0:1"), FakeShard(env_, "ps-1:1")};
  TrainingGeneration generation_{clock_};
  JobControl control_{"job-1", clock_};
  std::unique_ptr<GlobalStep> step_;
  std::vector<int64_t> committed_;
  RoundKeeper keeper_{"job-1", clock_, generation_, control_, nullptr, FastRetry()};
};

TEST_F(RoundKeeperTest, TheRthJoinCommitsTheRoundOnEveryShardAndTheNextOneIsLate) {
  Open(/*workers=*/3, /*members=*/2, /*start=*/5);
  std::shared_ptr<RoundJoinAnswer> first = Join({2}, 5);
  EXPECT_FALSE(first->answered.HasBeenNotified());
  EXPECT_TRUE(shards_[0].commits().empty());

  std::shared_ptr<RoundJoinAnswer> second = Join({0}, 5);
  EXPECT_EQ(first->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(second->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(second->answer->global_step(), 6);
  for (FakeShard& shard : shards_) {
    ASSERT_EQ(shard.commits().size(), 1u);
    EXPECT_EQ(shard.commits()[0].round(), 5);
    EXPECT_EQ(shard.commits()[0].generation(), generation_.number());
    // In worker order, whatever order they joined in.
    EXPECT_EQ(CommittedWorkers(shard.commits()[0]), (std::vector<int>{0, 2}));
  }
  EXPECT_EQ(step_->value(), 6);
  EXPECT_EQ(committed_, (std::vector<int64_t>{6}));
  EXPECT_EQ(keeper_.round(), 6);

  // The third worker of round 5 is late: nothing of it is applied.
  EXPECT_EQ(Join({1}, 5)->outcome(), ROUND_JOIN_LATE);
  EXPECT_EQ(shards_[0].commits().size(), 1u);
}

TEST_F(RoundKeeperTest, ARetriedJoinGetsTheSameAnswer) {
  Open(3, 2, 0);
  std::shared_ptr<RoundJoinAnswer> waiting = Join({0}, 0);
  // A retry while the round is open waits with the first.
  std::shared_ptr<RoundJoinAnswer> retried = Join({0}, 0);
  Join({1}, 0);
  EXPECT_EQ(waiting->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(retried->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(Join({2}, 0)->outcome(), ROUND_JOIN_LATE);

  // Answers lost on the way: the same again, and the round stays as it was.
  EXPECT_EQ(Join({0}, 0)->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(Join({2}, 0)->outcome(), ROUND_JOIN_LATE);
  EXPECT_EQ(shards_[1].commits().size(), 1u);
  EXPECT_EQ(shards_[1].commits()[0].members_size(), 2);
}

TEST_F(RoundKeeperTest, JoinsOfOtherRoundsRunsOrWorkersAreRefusedOrLate) {
  std::shared_ptr<RoundJoinAnswer> early = Join({0}, 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(early->status())) << early->status();
  EXPECT_EQ(ReasonOf(early->status()), ERROR_REASON_UNSPECIFIED);

  Open(2, 2, 10);
  const absl::Status ahead = Join({0}, 11)->status();
  EXPECT_TRUE(absl::IsFailedPrecondition(ahead)) << ahead;
  EXPECT_EQ(ReasonOf(ahead), ERROR_REASON_WRONG_ROUND);
  EXPECT_EQ(Join({0}, 9)->outcome(), ROUND_JOIN_LATE);
  EXPECT_TRUE(absl::IsInvalidArgument(Join({2}, 10)->status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Join({0, 1, 100, 0}, 10)->status()));

  JoinRoundRequest other_run;
  other_run.mutable_task()->set_type(TASK_TYPE_WORKER);
  other_run.set_generation(generation_.number() + 1);
  other_run.set_round(10);
  other_run.set_push_incarnation(1);
  other_run.set_push_sequence(1);
  absl::Status refused;
  keeper_.Join(other_run, [&](absl::StatusOr<JoinRoundResponse> r) { refused = r.status(); });
  EXPECT_EQ(ReasonOf(refused), ERROR_REASON_RUN_ROLLED_BACK) << refused;
}

TEST_F(RoundKeeperTest, ANewerIncarnationOfAnAdmittedRankTakesItsPlace) {
  // Every worker in each round.
  Open(2, 2, 0);
  std::shared_ptr<RoundJoinAnswer> old_run = Join({0, 1, 100, 1}, 0);
  // The process ran the assignment again: its push replaced the old one on
  // the shards.
  std::shared_ptr<RoundJoinAnswer> new_run = Join({0, 1, 200, 1}, 0);
  EXPECT_EQ(old_run->outcome(), ROUND_JOIN_LATE);
  // An older push of the rank comes too late to take the place back.
  EXPECT_EQ(Join({0, 1, 150, 1}, 0)->outcome(), ROUND_JOIN_LATE);
  Join({1}, 0);
  EXPECT_EQ(new_run->outcome(), ROUND_JOIN_MEMBER);
  ASSERT_EQ(shards_[0].commits().size(), 1u);
  EXPECT_EQ(shards_[0].commits()[0].members(0).incarnation(), 200u);
}

TEST_F(RoundKeeperTest, AWorkerDroppedBeforeTheCommitLeavesItsRankToItsReplacement) {
  Open(2, 2, 0);
  std::shared_ptr<RoundJoinAnswer> lost = Join({0, /*incarnation=*/7, 100, 1}, 0);
  keeper_.Drop(0, /*incarnation=*/6);  // an older process of the rank: nothing
  EXPECT_FALSE(lost->answered.HasBeenNotified());
  keeper_.Drop(0, 7);
  EXPECT_EQ(lost->outcome(), ROUND_JOIN_LATE);

  std::shared_ptr<RoundJoinAnswer> other = Join({1}, 0);
  EXPECT_TRUE(shards_[0].commits().empty());  // the round waits for rank 0
  std::shared_ptr<RoundJoinAnswer> replacement = Join({0, 8, 300, 1}, 0);
  EXPECT_EQ(replacement->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(other->outcome(), ROUND_JOIN_MEMBER);
  ASSERT_EQ(shards_[1].commits().size(), 1u);
  EXPECT_EQ(shards_[1].commits()[0].members(0).incarnation(), 300u);
}

TEST_F(RoundKeeperTest, ADropWaitsForACommitInProgressThatHoldsTheWorker) {
  Open(2, 2, 0);
  absl::Notification release;
  shards_[1].OnCommit([&](const CommitRoundRequest&) { release.WaitForNotification(); });
  std::shared_ptr<RoundJoinAnswer> member = Join({0, 7, 100, 1}, 0);
  std::thread last([&] { Join({1}, 0); });
  ASSERT_TRUE(shards_[1].WaitForCommits(1, kTimeout));
  int64_t step_when_dropped = -1;
  std::thread drop([&] {
    keeper_.Drop(0, 7);
    step_when_dropped = step_->value();
  });
  release.Notify();
  drop.join();
  last.join();
  // The commit applied it everywhere before the drop returned (the
  // worker's ledgers are read next).
  EXPECT_EQ(step_when_dropped, 1);
  EXPECT_EQ(member->outcome(), ROUND_JOIN_MEMBER);
}

TEST_F(RoundKeeperTest, NoCommitStartsWhileHeldAndARoundThatFilledCommitsOnRelease) {
  Open(2, 2, 3);
  keeper_.Hold();
  std::shared_ptr<RoundJoinAnswer> a = Join({0}, 3);
  std::shared_ptr<RoundJoinAnswer> b = Join({1}, 3);
  EXPECT_TRUE(shards_[0].commits().empty());
  EXPECT_FALSE(a->answered.HasBeenNotified());
  EXPECT_EQ(step_->value(), 3);
  keeper_.Release();
  EXPECT_EQ(a->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(b->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(shards_[0].commits().size(), 1u);
  EXPECT_EQ(step_->value(), 4);
}

TEST_F(RoundKeeperTest, AHoldWaitsForTheCommitInProgress) {
  Open(2, 2, 0);
  absl::Notification release;
  shards_[0].OnCommit([&](const CommitRoundRequest&) { release.WaitForNotification(); });
  Join({0}, 0);
  std::thread last([&] { Join({1}, 0); });
  ASSERT_TRUE(shards_[0].WaitForCommits(1, kTimeout));
  int64_t step_when_held = -1;
  std::thread hold([&] {
    keeper_.Hold();
    step_when_held = step_->value();
    keeper_.Release();
  });
  release.Notify();
  hold.join();
  last.join();
  EXPECT_EQ(step_when_held, 1);
}

TEST_F(RoundKeeperTest, NobodyJoinsARoundAtOrPastMaxSteps) {
  Open(2, 1, 4, /*max_steps=*/5);
  EXPECT_EQ(Join({0}, 4)->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(step_->value(), 5);
  EXPECT_EQ(Join({1}, 5)->outcome(), ROUND_JOIN_LATE);
  EXPECT_EQ(Join({0, 1, 100, 2}, 5)->outcome(), ROUND_JOIN_LATE);
  EXPECT_EQ(step_->value(), 5);
  EXPECT_EQ(shards_[0].commits().size(), 1u);
}

TEST_F(RoundKeeperTest, VoidedRoundsRefuseUntilRestartedAtACheckpointsStep) {
  Open(2, 2, 20);
  std::shared_ptr<RoundJoinAnswer> waiting = Join({0}, 20);
  const absl::Status rolled_back =
      WithReason(absl::FailedPreconditionError("rolling back"), ERROR_REASON_RUN_ROLLED_BACK);
  keeper_.Void(rolled_back);
  EXPECT_EQ(ReasonOf(waiting->status()), ERROR_REASON_RUN_ROLLED_BACK);
  EXPECT_EQ(ReasonOf(Join({1}, 20)->status()), ERROR_REASON_RUN_ROLLED_BACK);

  keeper_.Restart(10);
  step_->RestoreTo(10).IgnoreError();
  EXPECT_EQ(keeper_.round(), 10);
  std::shared_ptr<RoundJoinAnswer> a = Join({0, 1, 500, 1}, 10);
  std::shared_ptr<RoundJoinAnswer> b = Join({1, 1, 500, 1}, 10);
  EXPECT_EQ(a->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(b->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(shards_[0].commits().back().round(), 10);
  EXPECT_EQ(step_->value(), 11);
}

TEST_F(RoundKeeperTest, ACommitRefusedForGoodLosesTheShardAndVoidsTheRounds) {
  Open(2, 2, 0);
  shards_[1].FailCommits(absl::DataLossError("member missing"));
  std::shared_ptr<RoundJoinAnswer> a = Join({0}, 0);
  std::shared_ptr<RoundJoinAnswer> b = Join({1}, 0);
  EXPECT_EQ(ReasonOf(a->status()), ERROR_REASON_RUN_ROLLED_BACK) << a->status();
  EXPECT_EQ(ReasonOf(b->status()), ERROR_REASON_RUN_ROLLED_BACK);
  ASSERT_TRUE(generation_.lost().has_value());
  EXPECT_NE(generation_.lost()->find("ps/1"), std::string::npos) << *generation_.lost();
  EXPECT_EQ(step_->value(), 0);
  EXPECT_EQ(ReasonOf(Join({0, 1, 100, 2}, 1)->status()), ERROR_REASON_RUN_ROLLED_BACK);
}

TEST_F(RoundKeeperTest, AnUnavailableShardIsAskedAgain) {
  Open(2, 2, 0);
  shards_[1].FailCommits(absl::UnavailableError("restarting"), /*times=*/2);
  Join({0}, 0);
  EXPECT_EQ(Join({1}, 0)->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(shards_[1].commits().size(), 3u);
  EXPECT_FALSE(generation_.lost().has_value());
  EXPECT_EQ(step_->value(), 1);
}

TEST_F(RoundKeeperTest, ACommitStalledOnAnUnreachableShardEndsOnceTheShardIsKnownLost) {
  Open(2, 2, 0);
  shards_[1].FailCommits(absl::UnavailableError("no route to host"));
  std::shared_ptr<RoundJoinAnswer> a = Join({0}, 0);
  std::thread last([&] { Join({1}, 0); });
  ASSERT_TRUE(shards_[1].WaitForCommits(1, kTimeout));
  // The membership deadline finds the shard's process lost.
  generation_.MarkLost("ps/1 was lost");
  EXPECT_EQ(ReasonOf(a->status()), ERROR_REASON_RUN_ROLLED_BACK) << a->status();
  last.join();
  // A checkpoint's hold is not stuck behind it.
  keeper_.Hold();
  keeper_.Release();
  EXPECT_EQ(step_->value(), 0);
}

TEST_F(RoundKeeperTest, ADropWaitsForAStalledCommitOnlySoLong) {
  RoundKeeperOptions options = FastRetry();
  options.drop_wait = absl::Milliseconds(20);
  RoundKeeper keeper("job-1", clock_, generation_, control_, nullptr, options);
  step_ = std::make_unique<GlobalStep>(0);
  RoundPlan plan;
  plan.max_workers = 2;
  plan.members_per_round = 1;
  plan.step = step_.get();
  keeper.Open(std::move(plan), 0);
  absl::Notification release;
  shards_[0].OnCommit([&](const CommitRoundRequest&) { release.WaitForNotification(); });
  JoinRoundRequest request;
  request.mutable_task()->set_type(TASK_TYPE_WORKER);
  request.set_incarnation(7);
  request.set_push_incarnation(100);
  request.set_push_sequence(1);
  auto answer = std::make_shared<RoundJoinAnswer>();
  std::thread join([&] { keeper.Join(request, RoundJoinAnswer::To(answer)); });
  ASSERT_TRUE(shards_[0].WaitForCommits(1, kTimeout));
  // The caller (the coordinator's ticker) goes on to find the shard lost.
  keeper.Drop(0, 7);
  EXPECT_FALSE(answer->answered.HasBeenNotified());
  release.Notify();
  join.join();
  EXPECT_EQ(answer->outcome(), ROUND_JOIN_MEMBER);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
