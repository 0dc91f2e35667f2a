// Hot-standby shards (docs/design/replicas.md) on a real cluster: a
// coordinator with --ps_replicas=1, 2 shards on 4 parameter servers (shard
// i's primary ps/i, its backup ps/2+i) and 2 workers, as processes on
// loopback. Each shard's primary is killed with SIGKILL while a job trains
// (and restarted a second later, as Kubernetes restarts a pod: it comes
// back out of its shard's chain). Each time the coordinator promotes the
// backup under a new fencing epoch, the workers, told by their heartbeats'
// answers, retry what was in flight at the new primary, and training goes
// on with no rollback.
//
// An async job must end with every record of every epoch trained exactly
// once (the push ledgers of the final checkpoint, which the new primaries
// wrote), and a sync job with a slot per worker with final parameters bit
// for bit those of the same job undisturbed. A primary frozen past its
// deadline and woken acknowledges nothing; a lost backup leaves its primary
// alone; both replicas of a shard lost roll the job back, and its status
// names the shard.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/checkpoint_parameters.h"
#include "tests/clicks_job.h"
#include "tests/cluster_fixture.h"
#include "tests/push_ledgers.h"
#include "tests/sync_mlp_job.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using testing_checkpoints::CheckpointParameters;
using testing_checkpoints::FirstDifference;
using testing_checkpoints::ReadNewestCheckpoint;
using testing_cluster::JobRecord;
using testing_cluster::TestCluster;

constexpr int kShards = 2;

class PsFailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LocalClusterOptions options;
    options.num_ps = kShards;
    options.ps_replicas = 1;
    options.num_workers = 2;
    // Only the runs held against an undisturbed run's accuracy evaluate.
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    options.evaluator = absl::StrContains(test, "Accuracy");
    // A killed primary is found lost 4 s after its last heartbeat (less is tight
    // on two loaded cores).
    options.coordinator_flags = {"--records_per_lease=2048", "--heartbeat_interval_secs=0.5",
                                 "--heartbeat_timeout_secs=4"};
    absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(
        ::testing::UnitTest::GetInstance()->current_test_info()->name(), options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  // One damage done to the cluster once its job reaches `at`.
  struct Fault {
    int64_t at = 0;
    std::function<void()> act;
  };

  // Follows job `job_id` while each fault acts in turn once the job reaches
  // its step. Returns the job's record; *seconds_down: per fault, from its
  // act to the job's next 20 steps (training again).
  JobRecord FollowDisturbed(const std::string& job_id, const std::vector<Fault>& faults,
                            std::vector<double>* seconds_down) {
    std::atomic<bool> ended{false};
    std::atomic<int> done{0};
    std::thread disturber([&] {
      for (const Fault& fault : faults) {
        const int64_t at = cluster_->AwaitStep(job_id, fault.at, ended);
        if (at < 0) return;
        const absl::Time start = absl::Now();
        fault.act();
        ++done;
        const int64_t next = cluster_->AwaitStep(job_id, at + 20, ended);
        if (next >= 0) seconds_down->push_back(absl::ToDoubleSeconds(absl::Now() - start));
      }
    });
    const JobRecord record = cluster_->Follow(job_id);
    ended = true;
    disturber.join();
    EXPECT_EQ(done.load(), static_cast<int>(faults.size())) << "the job ended before the faults";
    return record;
  }

  // SIGKILL to `task`, restarted a second later as Kubernetes restarts a
  // pod (at its address, empty, out of its shard's chain).
  Fault KillAndRestart(int64_t at, const std::string& task) {
    return {at, [this, task] {
              ASSERT_TRUE(cluster_->KillTask(task, SIGKILL).ok());
              absl::SleepFor(absl::Seconds(1));
              EXPECT_TRUE(cluster_->RestartTask(task).ok());
            }};
  }

  // Once the job reaches `at` and has rebuilt `rebuilt` backups: SIGKILL to
  // `task`, restarted a second later.
  Fault KillAndRestartAfterRebuilds(int64_t at, int rebuilt, const std::string& task) {
    return {at, [this, at, rebuilt, task] {
              absl::StatusOr<JobStatus> status = cluster_->AwaitStatus(
                  running_job_,
                  [rebuilt](const JobStatus& s) { return s.backups_rebuilt() >= rebuilt; },
                  absl::Seconds(60));
              ASSERT_TRUE(status.ok()) << "no backup was rebuilt: " << status.status();
              KillAndRestart(at, task).act();
            }};
  }

  // Waits until task `name` is a live member (idle or working).
  void AwaitLive(const std::string& name) {
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (!cluster_->AwaitMemberState(name, MEMBER_STATE_IDLE, absl::Milliseconds(1)).ok() &&
           !cluster_->AwaitMemberState(name, MEMBER_STATE_BUSY, absl::Milliseconds(1)).ok()) {
      ASSERT_LT(absl::Now(), give_up) << name << " did not come back";
    }
  }

  // Runs the async clicks job through `faults`; checks that it succeeds.
  // Its final status.
  JobStatus RunAsync(const std::string& name, const std::vector<Fault>& faults,
                     bool evaluated = false);

  std::unique_ptr<TestCluster> cluster_;
  // The job RunAsync runs.
  std::string running_job_;
};

std::string AsyncClicksJob(const std::string& name, int32_t epochs, int64_t num_examples,
                           bool evaluated = false) {
  testing_jobs::ClicksJob job;
  job.name = name;
  job.model_dir = name;
  job.mode = evaluated ? "JOB_MODE_TRAIN_AND_EVAL" : "JOB_MODE_TRAIN";
  if (evaluated) job.eval = "metrics: \"accuracy\"";
  job.num_examples = num_examples;
  job.max_steps = 0;
  job.steps_per_loop = 50;
  job.checkpoint_every_steps = 400;
  const std::string text = job.Text();
  EXPECT_THAT(text, HasSubstr("batch_size: 128"));
  return absl::StrReplaceAll(
      text, {{"batch_size: 128", absl::StrCat("batch_size: 128 epochs: ", epochs)}});
}

constexpr int64_t kNumExamples = 65536;
constexpr int32_t kEpochs = 6;  // 3072 steps

JobStatus PsFailoverTest::RunAsync(const std::string& name, const std::vector<Fault>& faults,
                                   bool evaluated) {
  absl::StatusOr<std::string> job_id =
      cluster_->Submit(AsyncClicksJob(name, kEpochs, kNumExamples, evaluated));
  EXPECT_TRUE(job_id.ok()) << job_id.status();
  if (!job_id.ok()) return JobStatus();
  running_job_ = *job_id;
  std::vector<double> seconds_down;
  const JobStatus status = FollowDisturbed(*job_id, faults, &seconds_down).final_status;
  for (double s : seconds_down)
    std::printf("%s: training again %.2f s after a fault\n", name.c_str(), s);
  std::printf(
      "%s: %s (%s) at step %lld; %d failovers (last: %s); %d backups rebuilt (last: %s); "
      "%d rollbacks (last: %s)\n",
      name.c_str(), JobState_Name(status.state()).c_str(),
      StopReason_Name(status.stop_reason()).c_str(), static_cast<long long>(status.global_step()),
      status.failovers(), status.last_failover().c_str(), status.backups_rebuilt(),
      status.last_backup_rebuilt().c_str(), status.rollbacks(), status.last_rollback().c_str());
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_END_OF_DATA);
  return status;
}

// Every record of every epoch trained exactly once on both shards, every
// push on both (the worker retries at the new primary what the lost one
// did not acknowledge), and the global step what they applied.
void ExpectEveryPushOnBothShards(const JobStatus& status) {
  const std::vector<PushLedger> ledgers = testing_ledgers::FinalLedgers(status);
  ASSERT_EQ(ledgers.size(), 2u);
  EXPECT_FALSE(
      testing_ledgers::ExpectTwoShardsTrainedEveryRecordOnce(ledgers, kNumExamples, kEpochs))
      << "a push is on one shard only";
  EXPECT_EQ(status.global_step(),
            std::max(ledgers[0].applied_pushes(), ledgers[1].applied_pushes()));
}

// As after any rollback of an async job: no record twice on a shard (a
// push in flight when the checkpoint was taken may be on one shard only).
void ExpectNoRecordTwiceOnAShard(const JobStatus& status) {
  const std::vector<PushLedger> ledgers = testing_ledgers::FinalLedgers(status);
  ASSERT_EQ(ledgers.size(), 2u);
  testing_ledgers::ExpectNoRecordTwice(ledgers[0], "ps/0");
  testing_ledgers::ExpectNoRecordTwice(ledgers[1], "ps/1");
}

TEST_F(PsFailoverTest, AsyncJobTrainsEveryRecordOnceAsEachPrimaryIsKilled) {
  const JobStatus status =
      RunAsync("async_failover", {KillAndRestart(800, "ps/0"), KillAndRestart(1900, "ps/1")});
  EXPECT_EQ(status.rollbacks(), 0) << status.last_rollback();
  EXPECT_EQ(status.failovers(), 2);
  EXPECT_THAT(status.last_failover(), HasSubstr("ps/3 took over as its primary"));
  // The killed primaries came back and were rebuilt as backups.
  EXPECT_GE(status.backups_rebuilt(), 1);
  ExpectEveryPushOnBothShards(status);
}

// A primary killed, restarted and rebuilt as its shard's backup by state
// transfer while the job trains; then the new primary killed: the rebuilt
// backup takes over, holding every push it was told of, so the shard
// survives a second loss without a rollback.
TEST_F(PsFailoverTest, ARebuiltBackupTakesOverAtTheShardsSecondLoss) {
  const JobStatus status = RunAsync(
      "lost_twice", {KillAndRestart(600, "ps/0"), KillAndRestartAfterRebuilds(1500, 1, "ps/2")});
  EXPECT_EQ(status.rollbacks(), 0) << status.last_rollback();
  EXPECT_EQ(status.failovers(), 2);
  EXPECT_THAT(status.last_failover(), HasSubstr("ps/0 took over as its primary"));
  EXPECT_GE(status.backups_rebuilt(), 1);
  EXPECT_THAT(status.last_backup_rebuilt(), HasSubstr("rejoined shard 0 as its backup"));
  ExpectEveryPushOnBothShards(status);
}

// The primary lost while its shard's backup is being rebuilt: the shard
// has no replica that holds everything, and the job rolls back, naming it.
// The new primary is frozen before the lost process comes back, so that
// the rebuild cannot finish however fast the machine is (a small shard's
// state moves in milliseconds: freezing the restarted process instead
// raced with its catching up).
TEST_F(PsFailoverTest, APrimaryLostWhileItsBackupIsRebuiltRollsBack) {
  const JobStatus status = RunAsync(
      "lost_while_rebuilt",
      {{600,
        [this] {
          ASSERT_TRUE(cluster_->KillTask("ps/0", SIGKILL).ok());
          ASSERT_TRUE(cluster_
                          ->AwaitStatus(running_job_,
                                        [](const JobStatus& s) { return s.failovers() >= 1; },
                                        absl::Seconds(60))
                          .ok());
          ASSERT_TRUE(cluster_->SignalTask("ps/2", SIGSTOP).ok());
          ASSERT_TRUE(cluster_->RestartTask("ps/0").ok());
          AwaitLive("ps/0");
          // The coordinator's next turn begins the rebuild, which the
          // frozen primary cannot serve: it has begun once ps/0 holds the
          // job as the shard's backup (replica role 2). Then the primary
          // is lost, before its heartbeat deadline (4 s from the freeze),
          // and its restart says so at once.
          const absl::Time give_up = absl::Now() + absl::Seconds(3);
          absl::StatusOr<double> role = 0.0;
          while ((!role.ok() || *role != 2) && absl::Now() < give_up) {
            absl::SleepFor(absl::Milliseconds(20));
            role = cluster_->MetricValue("ps/0", "pstrain_ps_replica_role");
          }
          ASSERT_TRUE(role.ok() && *role == 2)
              << "ps/0 was not set up as shard 0's backup within 3 s: "
              << (role.ok() ? absl::StrCat("role ", *role) : role.status().ToString());
          ASSERT_TRUE(cluster_->KillTask("ps/2", SIGKILL).ok());
          EXPECT_TRUE(cluster_->RestartTask("ps/2").ok());
        }}});
  EXPECT_EQ(status.failovers(), 1);
  EXPECT_EQ(status.rollbacks(), 1);
  EXPECT_THAT(status.last_rollback(), HasSubstr("shard 0"));
  EXPECT_THAT(status.last_rollback(), HasSubstr("was being rebuilt and had not caught up"));
  ExpectNoRecordTwiceOnAShard(status);
}

// A primary frozen past its membership deadline (a stalled host) is
// replaced; when it wakes, it cannot acknowledge anything: its backup,
// now the primary, refuses what it forwards.
TEST_F(PsFailoverTest, AFrozenPrimaryThatWakesAcknowledgesNothing) {
  const JobStatus status =
      RunAsync("frozen_primary", {{800, [this] {
                                     ASSERT_TRUE(cluster_->SignalTask("ps/0", SIGSTOP).ok());
                                     // Past its deadline (4 s).
                                     absl::SleepFor(absl::Seconds(6));
                                     EXPECT_TRUE(cluster_->SignalTask("ps/0", SIGCONT).ok());
                                   }}});
  EXPECT_EQ(status.rollbacks(), 0) << status.last_rollback();
  EXPECT_EQ(status.failovers(), 1);
  EXPECT_THAT(status.last_failover(), HasSubstr("ps/2 took over as its primary"));
  ExpectEveryPushOnBothShards(status);
}

// A backup lost leaves its primary alone: nothing waits for it, nothing is
// lost.
TEST_F(PsFailoverTest, ALostBackupLeavesItsPrimaryAlone) {
  const JobStatus status = RunAsync("backup_lost", {KillAndRestart(800, "ps/3")});
  EXPECT_EQ(status.rollbacks(), 0) << status.last_rollback();
  EXPECT_EQ(status.failovers(), 1);
  EXPECT_THAT(status.last_failover(), HasSubstr("ps/1 goes on alone"));
  ExpectEveryPushOnBothShards(status);
}

// Both replicas of a shard lost at once: the job rolls back to its newest
// checkpoint as without replicas, and its status names the shard.
TEST_F(PsFailoverTest, BothReplicasLostRollBackAndTheStatusSaysWhich) {
  const JobStatus status =
      RunAsync("both_lost", {{800, [this] {
                                ASSERT_TRUE(cluster_->KillTask("ps/0").ok());
                                ASSERT_TRUE(cluster_->KillTask("ps/2").ok());
                                absl::SleepFor(absl::Seconds(1));
                                EXPECT_TRUE(cluster_->RestartTask("ps/0").ok());
                                EXPECT_TRUE(cluster_->RestartTask("ps/2").ok());
                              }}});
  EXPECT_EQ(status.rollbacks(), 1);
  EXPECT_THAT(status.last_rollback(), HasSubstr("shard 0"));
  ExpectNoRecordTwiceOnAShard(status);
}

double Accuracy(const JobStatus& status) {
  auto it = status.last_eval_metrics().find("accuracy");
  return it == status.last_eval_metrics().end() ? -1 : it->second;
}

// Primaries killed again and again at seeded moments, each one while the
// shard's backup is whole again (the replica killed before was rebuilt):
// no rollback, every record trained once, and the accuracy of the
// undisturbed run within a point.
TEST_F(PsFailoverTest, RepeatedSeededKillsKeepEveryRecordOnceAndTheAccuracy) {
  const JobStatus calm = RunAsync("calm", {}, /*evaluated=*/true);
  ASSERT_GE(Accuracy(calm), 0) << "the undisturbed run was not evaluated";

  constexpr uint32_t kSeed = 40;
  std::mt19937 random(kSeed);
  // Each shard's primary now: ps/i first, its backup ps/(2 + i) after a
  // failover, and back.
  int primary[kShards] = {0, 1};
  std::vector<Fault> faults;
  for (int k = 0; k < 3; ++k) {
    // One kill in each third of the 3072 steps, after its first 300.
    const int64_t at = 300 + k * 1000 + std::uniform_int_distribution<int64_t>(0, 500)(random);
    const int shard = std::uniform_int_distribution<int>(0, kShards - 1)(random);
    const std::string task = absl::StrCat("ps/", primary[shard]);
    primary[shard] = primary[shard] < kShards ? primary[shard] + kShards : primary[shard] - kShards;
    std::printf("seed %u: kill %d at step %lld: %s (shard %d's primary)\n", kSeed, k + 1,
                static_cast<long long>(at), task.c_str(), shard);
    faults.push_back(KillAndRestartAfterRebuilds(at, k, task));
  }
  const JobStatus status = RunAsync("seeded_kills", faults, /*evaluated=*/true);
  std::printf("accuracy: undisturbed %.4f, three primaries killed %.4f\n", Accuracy(calm),
              Accuracy(status));
  EXPECT_EQ(status.rollbacks(), 0) << status.last_rollback();
  EXPECT_EQ(status.failovers(), 3);
  ExpectEveryPushOnBothShards(status);
  EXPECT_NEAR(Accuracy(status), Accuracy(calm), 0.01);
}

std::string SyncMlpJob(const std::string& name) { return testing_jobs::SyncMlpJob(name, 300, 100); }

TEST_F(PsFailoverTest, SyncJobEndsBitwiseAsUndisturbedWhenEachPrimaryIsKilled) {
  absl::StatusOr<CheckpointParameters> calm;
  {
    absl::StatusOr<std::string> job_id = cluster_->Submit(SyncMlpJob("calm"));
    ASSERT_TRUE(job_id.ok()) << job_id.status();
    const JobRecord record = cluster_->Follow(*job_id);
    ASSERT_EQ(record.final_status.state(), JOB_STATE_SUCCEEDED);
    calm = ReadNewestCheckpoint(absl::StrCat(cluster_->checkpoint_root(), "/calm"));
    ASSERT_TRUE(calm.ok()) << calm.status();
  }
  absl::StatusOr<std::string> job_id = cluster_->Submit(SyncMlpJob("failed_over"));
  ASSERT_TRUE(job_id.ok()) << job_id.status();
  std::vector<double> seconds_down;
  const JobRecord record = FollowDisturbed(
      *job_id, {KillAndRestart(90, "ps/0"), KillAndRestart(190, "ps/1")}, &seconds_down);
  const JobStatus& status = record.final_status;
  for (double s : seconds_down)
    std::printf("sync_failover: training again %.2f s after a kill\n", s);
  ASSERT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.global_step(), 300);
  EXPECT_EQ(status.rollbacks(), 0) << status.last_rollback();
  EXPECT_EQ(status.failovers(), 2);
  absl::StatusOr<CheckpointParameters> failed_over =
      ReadNewestCheckpoint(absl::StrCat(cluster_->checkpoint_root(), "/failed_over"));
  ASSERT_TRUE(failed_over.ok()) << failed_over.status();
  EXPECT_EQ(failed_over->global_step, 300);
  EXPECT_EQ(FirstDifference(*calm, *failed_over), "");
}

}  // namespace
}  // namespace pstrain
