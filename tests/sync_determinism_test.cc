// Sync mode with a fixed seed is deterministic: on a real cluster
// (coordinator, a parameter server and 2 workers as processes on loopback)
// the same job trained twice undisturbed, and once more with kill -9 of a
// worker at a seeded step (restarted a moment later, as Kubernetes would
// restart its pod), ends at the same global step with final parameters
// that are bitwise identical: every variable's values and optimizer slots,
// read back from the final checkpoints with the checkpoint reader.
//
// What makes it hold: round r's batches are fixed by the data order and r
// (the coordinator deals leases to one slot per worker rank, each lease
// naming its first round), a worker that takes a lost one's lease up skips
// the batches of rounds already completed, the shard counts a slot once
// whoever fills it, and sums each round in slot order.

#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/checkpoint_parameters.h"
#include "tests/cluster_fixture.h"

namespace pstrain {
namespace {

using testing_checkpoints::CheckpointParameters;
using testing_checkpoints::FirstDifference;
using testing_checkpoints::ReadNewestCheckpoint;
using testing_cluster::JobRecord;
using testing_cluster::TestCluster;

constexpr int64_t kMaxSteps = 300;
constexpr int64_t kCheckpointEverySteps = 100;

// The clicks job of tests/clicks_job.h (logistic regression, Adagrad, the
// same synthetic click data), in sync mode with a fixed seed and without
// evaluation. By default 20,000 records of batches of 128 in leases of
// 1024, repeated: 300 rounds of 2 batches cross three epoch boundaries and
// their short leases. `stop` is the body of the stop message; epochs 0
// repeats the data.
std::string Job(const std::string& name, int64_t num_examples = 20000,
                const std::string& stop = absl::StrCat("max_steps: ", kMaxSteps), int epochs = 0) {
  return absl::StrReplaceAll(R"pb(
                               name: "$NAME"
                               mode: JOB_MODE_TRAIN
                               model { logistic_regression {} }
                               train_data {
                                 synthetic_clicks { num_examples: $EXAMPLES seed: 5 }
                                 batch_size: 128
                                 shuffle_seed: 11
                                 epochs: $EPOCHS
                               }
                               optimizer {
                                 adagrad {}
                                 learning_rate: 0.1
                               }
                               training { update_mode: UPDATE_MODE_SYNC seed: 7 steps_per_loop: 25 }
                               stop { $STOP }
                               checkpoint { model_dir: "$NAME" every_steps: $EVERY }
                             )pb",
                             {{"$NAME", name},
                              {"$EXAMPLES", absl::StrCat(num_examples)},
                              {"$EPOCHS", absl::StrCat(epochs)},
                              {"$STOP", stop},
                              {"$EVERY", absl::StrCat(kCheckpointEverySteps)}});
}

class SyncDeterminismTest : public testing_cluster::SharedClusterTest<SyncDeterminismTest> {
 protected:
  static void SetUpTestSuite() {
    LocalClusterOptions options;
    options.num_ps = 1;
    options.num_workers = 2;
    options.evaluator = false;
    options.coordinator_flags = {"--heartbeat_interval_secs=0.5", "--heartbeat_timeout_secs=4"};
    if (!StartSharedCluster("sync_determinism", options)) return;
  }

  // Runs job `name` to its end; with kill_at_step > 0, kills worker/1 with
  // SIGKILL at the first progress event at or past that global step and
  // restarts it half a second later. Returns the final checkpoint's
  // parameters.
  static CheckpointParameters Run(const std::string& name, int64_t kill_at_step) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(Job(name));
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok()) return {};
    int64_t killed_at = -1;
    const JobRecord record = kill_at_step <= 0
                                 ? cluster_->Follow(*job_id)
                                 : cluster_->FollowKilling(
                                       *job_id, "worker/1",
                                       [&](const ProgressEvent& progress) {
                                         return progress.global_step() >= kill_at_step;
                                       },
                                       absl::Milliseconds(500), &killed_at);
    const JobStatus& status = record.final_status;
    EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
    EXPECT_EQ(status.stop_reason(), STOP_REASON_MAX_STEPS) << status.ShortDebugString();
    EXPECT_EQ(status.rollbacks(), 0) << status.last_rollback();
    if (kill_at_step > 0) {
      // The kill landed while the job trained, not after its end.
      EXPECT_GE(killed_at, kill_at_step) << "worker/1 was never killed";
      EXPECT_LT(killed_at, kMaxSteps) << "worker/1 was killed too late to matter";
    }
    absl::StatusOr<CheckpointParameters> parameters =
        ReadNewestCheckpoint(absl::StrCat(cluster_->checkpoint_root(), "/", name));
    EXPECT_TRUE(parameters.ok()) << parameters.status();
    std::printf("%s: global step %lld, final checkpoint %s, killed at step %lld\n", name.c_str(),
                static_cast<long long>(status.global_step()),
                parameters.ok() ? parameters->path.c_str() : "none",
                static_cast<long long>(killed_at));
    if (!parameters.ok()) return {};
    EXPECT_EQ(parameters->global_step, status.global_step());
    return *std::move(parameters);
  }

};


TEST_F(SyncDeterminismTest, AKilledWorkerChangesNoBitOfTheFinalParameters) {
  const CheckpointParameters calm = Run("calm", 0);
  ASSERT_FALSE(calm.values.empty());
  EXPECT_EQ(calm.global_step, kMaxSteps);

  // The undisturbed run is itself reproducible.
  const CheckpointParameters again = Run("calm_again", 0);
  EXPECT_EQ(again.global_step, calm.global_step);
  EXPECT_EQ(FirstDifference(calm, again), "");

  // A seeded step after the first checkpoint, well before the end.
  std::mt19937 random(2024);
  const int64_t kill_at =
      std::uniform_int_distribution<int64_t>(kCheckpointEverySteps + 10, kMaxSteps * 2 / 3)(random);
  const CheckpointParameters killed = Run("worker_killed", kill_at);
  EXPECT_EQ(killed.global_step, calm.global_step);
  EXPECT_EQ(FirstDifference(calm, killed), "");
}

// Not determinism but its companion: with an epoch limit, sync rounds end
// where a worker's share of the data does. 3,072 records are three leases
// of 8 batches: worker/0's slot gets two of them, worker/1's one, so rounds
// 8 to 15 could never fill; the job ends at step 8 rather than wait for
// them.
TEST_F(SyncDeterminismTest, AnEpochLimitEndsTheRoundsWhereAWorkersShareRunsOut) {
  absl::StatusOr<std::string> job_id =
      cluster_->Submit(Job("epoch_limit", 3072, /*stop=*/"", /*epochs=*/1));
  ASSERT_TRUE(job_id.ok()) << job_id.status();
  const JobStatus status = cluster_->Follow(*job_id).final_status;
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_END_OF_DATA);
  EXPECT_EQ(status.global_step(), 8) << status.reason();
  EXPECT_THAT(status.reason(), testing::HasSubstr("had no batch left for round 8"));
}

}  // namespace
}  // namespace pstrain
