// Hot-standby shards (docs/design/replicas.md) on a real cluster: a
// coordinator with --ps_replicas=1, 2 shards on 4 parameter servers (shard
// i's primary ps/i, its backup ps/2+i) and 2 workers, as processes on
// loopback. Each shard's primary is killed with SIGKILL while a job trains
// (and restarted a second later, as Kubernetes restarts a pod: it comes
// back out of its shard's chain). Each time the coordinator promotes the
// backup under a new fencing epoch, the workers take the new primary from
// their assignment, and training goes on with no rollback.
//
// An async job must end with every record of every epoch trained exactly
// once (the push ledgers of the final checkpoint, which the new primaries
// wrote), and a sync job with a slot per worker with final parameters bit
// for bit those of the same job undisturbed.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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

namespace pstrain {
namespace {

using testing_checkpoints::CheckpointParameters;
using testing_checkpoints::FirstDifference;
using testing_checkpoints::ReadNewestCheckpoint;
using testing_cluster::JobRecord;
using testing_cluster::TestCluster;
using ::testing::HasSubstr;

constexpr int kShards = 2;

class PsFailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LocalClusterOptions options;
    options.num_ps = kShards;
    options.ps_replicas = 1;
    options.num_workers = 2;
    options.evaluator = false;
    // A killed primary is found lost 4 s after its last heartbeat (less is tight
    // on two loaded cores).
    options.coordinator_flags = {"--records_per_lease=2048", "--heartbeat_interval_secs=0.5",
                                 "--heartbeat_timeout_secs=4"};
    absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(
        ::testing::UnitTest::GetInstance()->current_test_info()->name(), options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  // Follows job `job_id`, killing the primary of each shard in turn once
  // the job reaches each step of `kill_at`, restarting it a second later.
  // Returns the job's record; *seconds_down: per kill, from the kill to the
  // job's next step past it.
  JobRecord FollowKillingPrimaries(const std::string& job_id, const std::vector<int64_t>& kill_at,
                                   std::vector<double>* seconds_down) {
    std::atomic<bool> ended{false};
    std::atomic<int> kills{0};
    std::thread killer([&] {
      for (int shard = 0; shard < static_cast<int>(kill_at.size()); ++shard) {
        const int64_t at = cluster_->AwaitStep(job_id, kill_at[shard], ended);
        if (at < 0) return;
        const std::string primary = absl::StrCat("ps/", shard);
        const absl::Time killed = absl::Now();
        ASSERT_TRUE(cluster_->KillTask(primary, SIGKILL).ok());
        ++kills;
        absl::SleepFor(absl::Seconds(1));
        EXPECT_TRUE(cluster_->RestartTask(primary).ok());
        const int64_t next = cluster_->AwaitStep(job_id, at + 20, ended);
        if (next >= 0) seconds_down->push_back(absl::ToDoubleSeconds(absl::Now() - killed));
      }
    });
    const JobRecord record = cluster_->Follow(job_id);
    ended = true;
    killer.join();
    EXPECT_EQ(kills.load(), static_cast<int>(kill_at.size())) << "the job ended before the kills";
    return record;
  }

  std::unique_ptr<TestCluster> cluster_;
};

std::string AsyncClicksJob(const std::string& name, int32_t epochs, int64_t num_examples) {
  testing_jobs::ClicksJob job;
  job.name = name;
  job.model_dir = name;
  job.mode = "JOB_MODE_TRAIN";
  job.num_examples = num_examples;
  job.max_steps = 0;
  job.steps_per_loop = 50;
  job.checkpoint_every_steps = 400;
  const std::string text = job.Text();
  EXPECT_THAT(text, HasSubstr("batch_size: 128"));
  return absl::StrReplaceAll(text,
                             {{"batch_size: 128", absl::StrCat("batch_size: 128 epochs: ", epochs)}});
}

TEST_F(PsFailoverTest, AsyncJobTrainsEveryRecordOnceAsEachPrimaryIsKilled) {
  constexpr int64_t kNumExamples = 65536;
  constexpr int32_t kEpochs = 6;  // 3072 steps
  absl::StatusOr<std::string> job_id =
      cluster_->Submit(AsyncClicksJob("async_failover", kEpochs, kNumExamples));
  ASSERT_TRUE(job_id.ok()) << job_id.status();
  std::vector<double> seconds_down;
  const JobRecord record = FollowKillingPrimaries(*job_id, {800, 1900}, &seconds_down);

  const JobStatus& status = record.final_status;
  for (double s : seconds_down) std::printf("async_failover: training again %.2f s after a kill\n", s);
  std::printf("async_failover: %s (%s) at step %lld; %d failovers (last: %s); %d rollbacks\n",
              JobState_Name(status.state()).c_str(), StopReason_Name(status.stop_reason()).c_str(),
              static_cast<long long>(status.global_step()), status.failovers(),
              status.last_failover().c_str(), status.rollbacks());
  ASSERT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_END_OF_DATA);
  EXPECT_EQ(status.rollbacks(), 0) << status.last_rollback();
  EXPECT_EQ(status.failovers(), 2);
  EXPECT_THAT(status.last_failover(), HasSubstr("ps/3 took over as its primary"));

  const std::vector<PushLedger> ledgers = testing_ledgers::FinalLedgers(status);
  ASSERT_EQ(ledgers.size(), 2u);
  testing_ledgers::ExpectTwoShardsTrainedEveryRecordOnce(ledgers, kNumExamples, kEpochs);
  EXPECT_EQ(status.global_step(),
            std::max(ledgers[0].applied_pushes(), ledgers[1].applied_pushes()));
}

// An MLP 784-400-10 on Fashion-MNIST in sync mode with fixed seeds, a slot
// per worker in each round.
std::string SyncMlpJob(const std::string& name) {
  return absl::StrReplaceAll(R"pb(
                               name: "$NAME"
                               mode: JOB_MODE_TRAIN
                               model { mlp { hidden_units: [ 400 ] } }
                               train_data {
                                 fashion_mnist {}
                                 batch_size: 64
                                 shuffle_seed: 11
                               }
                               optimizer {
                                 adagrad {}
                                 learning_rate: 0.05
                               }
                               training { update_mode: UPDATE_MODE_SYNC seed: 7 steps_per_loop: 10 }
                               stop { max_steps: 300 }
                               checkpoint { model_dir: "$NAME" every_steps: 100 }
                             )pb",
                             {{"$NAME", name}});
}

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
  const JobRecord record = FollowKillingPrimaries(*job_id, {90, 190}, &seconds_down);
  const JobStatus& status = record.final_status;
  for (double s : seconds_down) std::printf("sync_failover: training again %.2f s after a kill\n", s);
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
