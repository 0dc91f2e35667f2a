// Agreed sync rounds in a running job, through the Coordinator's own calls
// (the in-process coordinator): sync mode with a backup worker on two
// FakeShards, whose CommitRound requests show what each shard was told to
// apply.

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/testing/fake_shard.h"
#include "server/coordinator/testing/in_process_coordinator.h"
#include "server/coordinator/testing/round_join_answer.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::ElementsAre;

constexpr absl::Duration kTimeout = absl::Seconds(30);

// Three workers, two gradients a round, a checkpoint every step.
constexpr char kSyncWithBackup[] = R"pb(
  name: "t"
  mode: JOB_MODE_TRAIN
  model { logistic_regression {} }
  train_data { synthetic_clicks { num_examples: 4096 } }
  training { update_mode: UPDATE_MODE_SYNC replicas_to_aggregate: 2 }
  stop { max_steps: 1000 }
  checkpoint { model_dir: "m" every_steps: 1 }
)pb";

class RoundKeeperJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A model_dir of its own: a checkpoint of another test would be resumed.
    const std::string root = JoinPath(
        ::testing::TempDir(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    RemoveTree(env_, root).IgnoreError();
    ASSERT_TRUE(CreateDirs(env_, root).ok());
    CoordinatorOptions options;
    options.checkpoint_root = root;
    options.runner.num_ps = 2;
    options.runner.num_workers = 3;
    options.membership.heartbeat_timeout = absl::Hours(10);
    InProcessCoordinator::Fakes fakes;
    fakes.num_records = 4096;
    coordinator_ = std::make_unique<InProcessCoordinator>(options, std::move(fakes));
  }

  Coordinator& coordinator() { return coordinator_->coordinator(); }
  FakeShard& shard(int index) { return coordinator_->shard(index); }

  // worker/`index` registers as `incarnation`.
  void Register(int index, uint64_t incarnation) {
    RegisterRequest request;
    request.mutable_task()->set_type(TASK_TYPE_WORKER);
    request.mutable_task()->set_index(index);
    request.set_incarnation(incarnation);
    ASSERT_TRUE(coordinator().Register(request).ok());
  }

  // The shards and three workers join; the job starts (generation_).
  void StartJob() {
    ASSERT_TRUE(coordinator_->RegisterShards().ok());
    for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(Register(i, 1));
    SubmitJobRequest request;
    ASSERT_TRUE(
        google::protobuf::TextFormat::ParseFromString(kSyncWithBackup, request.mutable_spec()));
    absl::StatusOr<SubmitJobResponse> submitted = coordinator().SubmitJob(request);
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    job_id_ = submitted->job_id();
    TaskId worker;
    worker.set_type(TASK_TYPE_WORKER);
    absl::StatusOr<Assignment> assignment = coordinator_->AwaitBoardAssignment(worker, kTimeout);
    ASSERT_TRUE(assignment.ok()) << assignment.status();
    generation_ = assignment->generation();
  }

  // worker/`index` (registered as `incarnation`) joins `round` with its
  // push of `push_incarnation`.
  std::shared_ptr<RoundJoinAnswer> Join(int index, int64_t round, uint64_t push_incarnation = 100,
                                        uint64_t incarnation = 1) {
    JoinRoundRequest request;
    request.mutable_task()->set_type(TASK_TYPE_WORKER);
    request.mutable_task()->set_index(index);
    request.set_incarnation(incarnation);
    request.set_job_id(job_id_);
    request.set_generation(generation_);
    request.set_round(round);
    request.set_push_incarnation(push_incarnation);
    request.set_push_sequence(round + 1);
    auto answer = std::make_shared<RoundJoinAnswer>();
    coordinator().JoinRound(request, RoundJoinAnswer::To(answer));
    return answer;
  }

  PosixEnv env_;
  std::unique_ptr<InProcessCoordinator> coordinator_;
  std::string job_id_;
  uint64_t generation_ = 0;
};

TEST_F(RoundKeeperJobTest, TwoOfThreeWorkersCommitTheRoundOnBothShardsAndTheThirdIsLate) {
  ASSERT_NO_FATAL_FAILURE(StartJob());
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(shard(i).created().size(), 1u);
    EXPECT_TRUE(shard(i).created()[0].rounds_agreed());
  }
  std::shared_ptr<RoundJoinAnswer> first = Join(2, 0);
  std::shared_ptr<RoundJoinAnswer> second = Join(0, 0);
  EXPECT_EQ(first->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(second->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(second->answer->global_step(), 1);
  const std::vector<CommitRoundRequest> commits = shard(0).commits();
  ASSERT_EQ(commits.size(), 1u);
  EXPECT_EQ(commits[0].round(), 0);
  EXPECT_EQ(commits[0].generation(), generation_);
  EXPECT_THAT(CommittedWorkers(commits[0]), ElementsAre(0, 2));
  // Both shards apply exactly the same pushes.
  ASSERT_EQ(shard(1).commits().size(), 1u);
  EXPECT_EQ(shard(1).commits()[0].SerializeAsString(), commits[0].SerializeAsString());

  EXPECT_EQ(Join(1, 0)->outcome(), ROUND_JOIN_LATE);
  EXPECT_EQ(coordinator().running()->global_step(), 1);
}

TEST_F(RoundKeeperJobTest, ALostWorkersJoinIsDroppedAndTheRoundCommitsWithoutIt) {
  ASSERT_NO_FATAL_FAILURE(StartJob());
  std::shared_ptr<RoundJoinAnswer> lost = Join(0, 0);
  // worker/0's process restarts: the old one's work is handed back, its
  // join first.
  ASSERT_NO_FATAL_FAILURE(Register(0, 2));
  EXPECT_EQ(lost->outcome(), ROUND_JOIN_LATE);
  EXPECT_TRUE(shard(0).commits().empty());

  std::shared_ptr<RoundJoinAnswer> a = Join(1, 0);
  std::shared_ptr<RoundJoinAnswer> b = Join(2, 0);
  EXPECT_EQ(a->outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(b->outcome(), ROUND_JOIN_MEMBER);
  ASSERT_EQ(shard(0).commits().size(), 1u);
  EXPECT_THAT(CommittedWorkers(shard(0).commits()[0]), ElementsAre(1, 2));
}

TEST_F(RoundKeeperJobTest, ACheckpointNeverInterleavesWithACommit) {
  absl::Mutex mu;
  std::vector<std::string> events;
  auto note = [&](std::string event) {
    absl::MutexLock lock(&mu);
    events.push_back(std::move(event));
  };
  std::vector<std::shared_ptr<RoundJoinAnswer>> filled_meanwhile;
  std::atomic<bool> joined{false};
  for (int i = 0; i < 2; ++i) {
    shard(i).OnCommit([&note, i](const CommitRoundRequest& request) {
      note(absl::StrCat("commit ", request.round(), " on ps/", i));
    });
    shard(i).SetSnapshotContents(
        [&, i](const SnapshotRequest& request) -> absl::StatusOr<std::string> {
          note(absl::StrCat("snapshot on ps/", i));
          if (i == 0 && !joined.exchange(true)) {
            // Round 1 fills while the shards snapshot ckpt-1.
            std::shared_ptr<RoundJoinAnswer> a = Join(0, 1);
            std::shared_ptr<RoundJoinAnswer> b = Join(1, 1);
            absl::MutexLock lock(&mu);
            filled_meanwhile = {a, b};
          }
          return absl::StrCat("shard ", i, " at ", request.global_step(), "\n");
        });
  }
  ASSERT_NO_FATAL_FAILURE(StartJob());
  // Round 0 commits; the job takes ckpt-1, during which round 1 fills.
  Join(0, 0);
  EXPECT_EQ(Join(1, 0)->outcome(), ROUND_JOIN_MEMBER);
  ASSERT_TRUE(shard(0).WaitForCommits(2, kTimeout));
  ASSERT_TRUE(shard(1).WaitForCommits(2, kTimeout));
  std::vector<std::shared_ptr<RoundJoinAnswer>> filled;
  {
    absl::MutexLock lock(&mu);
    filled = filled_meanwhile;
  }
  ASSERT_EQ(filled.size(), 2u);
  // Answered once round 1 was committed on both shards.
  for (const auto& join : filled) EXPECT_EQ(join->outcome(), ROUND_JOIN_MEMBER);

  absl::MutexLock lock(&mu);
  // Round 0 on both shards, then both snapshots, then round 1.
  ASSERT_GE(events.size(), 6u);
  std::vector<std::string> first(events.begin(), events.begin() + 6);
  std::sort(first.begin(), first.begin() + 2);
  std::sort(first.begin() + 2, first.begin() + 4);
  std::sort(first.begin() + 4, first.end());
  EXPECT_THAT(first, ElementsAre("commit 0 on ps/0", "commit 0 on ps/1", "snapshot on ps/0",
                                 "snapshot on ps/1", "commit 1 on ps/0", "commit 1 on ps/1"));
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
