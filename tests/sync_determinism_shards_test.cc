// Sync mode is deterministic on several parameter servers: on a real
// cluster (coordinator, 2 or 3 parameter servers and 2 workers as processes
// on loopback) the same job trained twice undisturbed, and once more with a
// worker killed between its pushes to two shards, ends at the same global
// step with bitwise identical final parameters: every variable's values and
// optimizer slots. And once more with a parameter server killed after the
// first checkpoint: every shard rolls back to it and training goes on from
// there, each worker slot with the rest of the data lease it had at the
// checkpoint (DataPosition.slot_leases), to the same bits.
//
// What makes it hold beyond one shard: the coordinator agrees each round's
// members with every shard, and a shard applies a round only when it is
// committed (docs/design/sync_rounds.md). Before, the shard that had the
// killed worker's push completed the round alone and moved on, and the
// worker that took the rank up computed its batch from parameters of two
// different rounds.
//
// The kill between shards: the shard holding the MLP's first layer (over
// 1 MB of gradient a push, past what a stream carries to a process that
// does not read) is stopped with SIGSTOP; worker/1's pushes to the other
// shards complete while its push to that one cannot; worker/1 is killed
// with SIGKILL, the shard continued, and worker/1 restarted.

#include <signal.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/checkpoint_parameters.h"
#include "tests/cluster_fixture.h"
#include "tests/sync_mlp_job.h"

namespace pstrain {
namespace {

using testing_checkpoints::CheckpointParameters;
using testing_checkpoints::FirstDifference;
using testing_checkpoints::ReadNewestCheckpoint;
using testing_cluster::JobRecord;
using testing_cluster::TestCluster;

constexpr int64_t kMaxSteps = 240;
constexpr int64_t kCheckpointEverySteps = 80;
// The step after which a run is disturbed: past the first checkpoint, well
// before the end.
constexpr int64_t kDisturbAt = 110;

std::string Job(const std::string& name) {
  return testing_jobs::SyncMlpJob(name, kMaxSteps, kCheckpointEverySteps);
}

class SyncDeterminismOnShardsTest : public testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    LocalClusterOptions options;
    options.num_ps = GetParam();
    options.num_workers = 2;
    options.evaluator = false;
    options.coordinator_flags = {"--heartbeat_interval_secs=0.5", "--heartbeat_timeout_secs=4"};
    // Tensor bytes in the gRPC messages, whose flow control holds back a
    // push to a stopped shard (a shared-memory lane would take it whole).
    options.shared_memory = false;
    absl::StatusOr<std::unique_ptr<TestCluster>> started =
        TestCluster::Start(absl::StrCat("sync_determinism_", GetParam(), "ps"), options);
    ASSERT_TRUE(started.ok()) << started.status();
    cluster_ = *std::move(started);
  }

  // The final checkpoint's parameters of `record`'s job `name`.
  CheckpointParameters FinalParameters(const std::string& name, const JobRecord& record) {
    const JobStatus& status = record.final_status;
    EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
    EXPECT_EQ(status.global_step(), kMaxSteps) << status.ShortDebugString();
    absl::StatusOr<CheckpointParameters> parameters =
        ReadNewestCheckpoint(absl::StrCat(cluster_->checkpoint_root(), "/", name));
    EXPECT_TRUE(parameters.ok()) << parameters.status();
    std::printf("%d ps, %s: global step %lld, %d rollback(s), final checkpoint %s\n", GetParam(),
                name.c_str(), static_cast<long long>(status.global_step()), status.rollbacks(),
                parameters.ok() ? parameters->path.c_str() : "none");
    if (!parameters.ok()) return {};
    EXPECT_EQ(parameters->global_step, status.global_step());
    return *std::move(parameters);
  }

  CheckpointParameters Undisturbed(const std::string& name) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(Job(name));
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok()) return {};
    const JobRecord record = cluster_->Follow(*job_id);
    EXPECT_EQ(record.final_status.rollbacks(), 0);
    return FinalParameters(name, record);
  }

  // Kills worker/1 while its push to `stopped_shard` cannot be delivered
  // and its pushes to the other shards are.
  CheckpointParameters KilledBetweenShards(const std::string& name, int stopped_shard) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(Job(name));
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok()) return {};
    const std::string shard = absl::StrCat("ps/", stopped_shard);
    bool done = false;
    const JobRecord record = cluster_->Follow(*job_id, [&](const JobEvent& event) {
      if (done || !event.has_progress() || event.progress().global_step() < kDisturbAt) return;
      done = true;
      ASSERT_TRUE(cluster_->SignalTask(shard, SIGSTOP).ok());
      // worker/1 is blocked once its steps stop moving: its push to the
      // stopped shard waits for an answer.
      EXPECT_TRUE(AwaitStepsStill("worker/1").ok());
      EXPECT_TRUE(cluster_->KillTask("worker/1").ok());
      EXPECT_TRUE(cluster_->SignalTask(shard, SIGCONT).ok());
      EXPECT_TRUE(cluster_->RestartTask("worker/1").ok());
    });
    EXPECT_TRUE(done) << "the job ended before step " << kDisturbAt;
    EXPECT_EQ(record.final_status.rollbacks(), 0) << record.final_status.last_rollback();
    return FinalParameters(name, record);
  }

  // Kills ps/0 with SIGKILL past the first checkpoint and restarts it:
  // every shard rolls back to that checkpoint.
  CheckpointParameters RolledBack(const std::string& name) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(Job(name));
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok()) return {};
    bool done = false;
    const JobRecord record = cluster_->Follow(*job_id, [&](const JobEvent& event) {
      if (done || !event.has_progress() || event.progress().global_step() < kDisturbAt) return;
      done = true;
      EXPECT_TRUE(cluster_->KillTask("ps/0").ok());
      EXPECT_TRUE(cluster_->RestartTask("ps/0").ok());
    });
    EXPECT_TRUE(done) << "the job ended before step " << kDisturbAt;
    EXPECT_EQ(record.final_status.rollbacks(), 1) << record.final_status.ShortDebugString();
    EXPECT_THAT(record.final_status.last_rollback(),
                ::testing::HasSubstr(absl::StrCat("ckpt-", kCheckpointEverySteps)));
    return FinalParameters(name, record);
  }

  // OK once worker/1's step count is the same in two scrapes 200 ms apart;
  // DeadlineExceeded after 10 s.
  absl::Status AwaitStepsStill(const std::string& worker) {
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    absl::StatusOr<double> before = cluster_->MetricValue(worker, "pstrain_worker_steps_total");
    while (absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(200));
      absl::StatusOr<double> now = cluster_->MetricValue(worker, "pstrain_worker_steps_total");
      if (before.ok() && now.ok() && *now == *before) return absl::OkStatus();
      before = now;
    }
    return absl::DeadlineExceededError(worker + " kept stepping with a shard stopped");
  }

  std::unique_ptr<TestCluster> cluster_;
};

TEST_P(SyncDeterminismOnShardsTest, AKillBetweenShardsOrARollbackChangesNoBitOfTheFinalParameters) {
  const CheckpointParameters calm = Undisturbed("calm");
  ASSERT_FALSE(calm.values.empty());
  // The first layer's weights are on one shard, and their gradient is
  // larger than a stream delivers to a stopped process.
  ASSERT_TRUE(calm.dense_shard.count("hidden_0/weights")) << "no hidden_0/weights";
  ASSERT_GT(calm.values.at("hidden_0/weights").size(), 784u * 400u);
  const int big_shard = calm.dense_shard.at("hidden_0/weights");

  const CheckpointParameters again = Undisturbed("calm_again");
  EXPECT_EQ(FirstDifference(calm, again), "");

  const CheckpointParameters killed = KilledBetweenShards("killed_between_shards", big_shard);
  EXPECT_EQ(FirstDifference(calm, killed), "");

  const CheckpointParameters rolled_back = RolledBack("rolled_back");
  EXPECT_EQ(FirstDifference(calm, rolled_back), "");
}

INSTANTIATE_TEST_SUITE_P(TwoAndThreeShards, SyncDeterminismOnShardsTest, testing::Values(2, 3),
                         [](const testing::TestParamInfo<int>& info) {
                           return absl::StrCat(info.param, "ps");
                         });

}  // namespace
}  // namespace pstrain
