// Workers that come and go under a running job (docs/design/elastic_workers.md),
// on a real cluster: a coordinator, 2 parameter servers and 2 workers as
// processes on loopback, with synthetic click logs. A sync job with every
// worker in each round gets a third worker and loses it again, each time
// with its data slots dealt again at a round boundary. The other jobs train
// until their data ends. While each trains, worker/2 is started and joins it (the job started
// with 2 workers), worker/0 gets SIGTERM and leaves, and worker/1 is killed
// with SIGKILL and not restarted, so worker/2 trains the rest alone. Once in
// async mode and once in sync mode with a backup worker
// (replicas_to_aggregate 1), whose rounds the coordinator agrees with both
// shards.
//
// Each job must succeed with every record of every epoch trained exactly
// once on each shard (the push ledgers of the final checkpoint), the joiner
// among those that trained, and the leaver's work handed back when it left:
// the coordinator has it LEFT (said so itself), not LOST (found at its
// membership deadline).

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/cluster_fixture.h"
#include "tests/push_ledgers.h"

namespace pstrain {
namespace {

using testing_cluster::JobRecord;
using testing_cluster::TestCluster;
using ::testing::HasSubstr;

constexpr int64_t kNumExamples = 65536;
constexpr int64_t kBatchSize = 128;  // ClicksJob's
// Short leases: each worker holds one for 16 steps, so the joiner gets
// data soon and the leaver and the killed one hold a lease in the middle.
constexpr int64_t kRecordsPerLease = 2048;

// The job of `epochs` passes over the logs (0: no limit), ending at
// `max_steps` (0: when the data ends); `training`: more TrainingSpec fields
// (default: async).
std::string Job(const std::string& name, int32_t epochs, const std::string& training,
                int64_t max_steps = 0) {
  testing_jobs::ClicksJob job;
  job.training = training;
  job.name = name;
  job.model_dir = name;
  job.mode = "JOB_MODE_TRAIN";
  job.num_examples = kNumExamples;
  job.max_steps = max_steps;
  job.steps_per_loop = 50;
  job.checkpoint_every_steps = 200;
  const std::string text = job.Text();
  EXPECT_THAT(text, HasSubstr("batch_size: 128"));
  return absl::StrReplaceAll(text,
                             {{"batch_size: 128", absl::StrCat("batch_size: 128 epochs: ", epochs)}});
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ElasticWorkersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LocalClusterOptions options;
    options.num_ps = num_ps_;
    options.num_workers = 2;
    options.evaluator = false;
    // A killed worker is found lost 4 s after its last heartbeat.
    options.coordinator_flags = {absl::StrCat("--records_per_lease=", kRecordsPerLease),
                                 "--heartbeat_interval_secs=1", "--heartbeat_timeout_secs=4"};
    absl::StatusOr<std::unique_ptr<TestCluster>> cluster =
        TestCluster::Start(::testing::UnitTest::GetInstance()->current_test_info()->name(),
                           options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  std::string CoordinatorLog() {
    return ReadFile(cluster_->cluster().coordinator().log_path);
  }

  // The steps worker/2 has computed; 0 before its page has any.
  double JoinerSteps() {
    absl::StatusOr<double> steps = cluster_->MetricValue("worker/2", "pstrain_worker_steps_total");
    return steps.ok() ? *steps : 0;
  }

  // Runs job `name` with its workers changing as the file says at a
  // quarter, half and three quarters of its steps, and checks what each
  // change and the end must show.
  void RunWithWorkersComingAndGoing(const std::string& name, int32_t epochs,
                                    const std::string& training);

  // Runs job `name`, sync with every worker in each round, to max_steps
  // while worker/2 joins and leaves again, and checks what that must show.
  void RunSyncSlotsWithTheTopWorkerJoiningAndLeaving(const std::string& name);

  // Parameter servers of the cluster SetUp starts.
  int num_ps_ = 2;

  std::unique_ptr<TestCluster> cluster_;
};

void ElasticWorkersTest::RunWithWorkersComingAndGoing(const std::string& name, int32_t epochs,
                                                      const std::string& training) {
  const int64_t total_steps = kNumExamples * epochs / kBatchSize;
  absl::StatusOr<std::string> job_id = cluster_->Submit(Job(name, epochs, training));
  ASSERT_TRUE(job_id.ok()) << job_id.status();
  std::atomic<bool> ended{false};
  std::atomic<int> changes_done{0};
  std::thread changes([&] {
    // A third worker joins; it must have trained before the others go.
    if (cluster_->AwaitStep(*job_id, total_steps / 4, ended) < 0) return;
    absl::StatusOr<LocalTask> added = cluster_->cluster().AddWorker();
    ASSERT_TRUE(added.ok()) << added.status();
    ASSERT_EQ(added->name(), "worker/2");
    const absl::Time give_up = absl::Now() + absl::Minutes(1);
    while (JoinerSteps() < 2 && absl::Now() < give_up && !ended) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    ASSERT_GE(JoinerSteps(), 2) << "worker/2 did not train after joining";
    ++changes_done;

    // worker/0 leaves as a pod that is deleted: SIGTERM, exit 0, and the
    // coordinator has it LEFT at once.
    if (cluster_->AwaitStep(*job_id, total_steps / 2, ended) < 0) return;
    const absl::Time term = absl::Now();
    absl::StatusOr<ExitStatus> left =
        cluster_->cluster().KillTask("worker/0", SIGTERM, absl::Seconds(10));
    ASSERT_TRUE(left.ok()) << left.status();
    EXPECT_TRUE(left->ok()) << "worker/0 did not exit 0 on SIGTERM: " << left->ToString();
    const absl::Status marked =
        cluster_->AwaitMemberState("worker/0", MEMBER_STATE_LEFT, absl::Seconds(1));
    EXPECT_TRUE(marked.ok()) << marked;
    std::printf("%s: worker/0 left %s after SIGTERM\n", name.c_str(),
                absl::FormatDuration(absl::Now() - term).c_str());
    ++changes_done;

    // worker/1 dies without a word and stays dead.
    if (cluster_->AwaitStep(*job_id, 3 * total_steps / 4, ended) < 0) return;
    ASSERT_TRUE(cluster_->KillTask("worker/1", SIGKILL).ok());
    ++changes_done;
  });
  const JobRecord record = cluster_->Follow(*job_id);
  ended = true;
  changes.join();
  ASSERT_EQ(changes_done.load(), 3) << "the job ended before its workers had changed";

  const JobStatus& status = record.final_status;
  std::printf("%s: %s (%s) at step %lld; worker/2 computed %.0f steps\n", name.c_str(),
              JobState_Name(status.state()).c_str(), StopReason_Name(status.stop_reason()).c_str(),
              static_cast<long long>(status.global_step()), JoinerSteps());
  ASSERT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_END_OF_DATA);
  EXPECT_EQ(status.rollbacks(), 0);

  const std::string log = CoordinatorLog();
  EXPECT_THAT(log, HasSubstr("worker/2 joins as rank 2 (the job waited for 2 workers)"));
  EXPECT_THAT(log, HasSubstr("worker/0 left the cluster"));
  EXPECT_THAT(log, HasSubstr("worker/1 was lost"));

  DataPosition position;
  const std::vector<PushLedger> ledgers = testing_ledgers::FinalLedgers(status, &position);
  ASSERT_EQ(ledgers.size(), 2u);
  EXPECT_EQ(position.epoch(), epochs - 1);
  const bool one_push_on_one_shard =
      testing_ledgers::ExpectTwoShardsTrainedEveryRecordOnce(ledgers, kNumExamples, epochs);
  // An agreed round is applied on every shard or on none.
  if (!training.empty()) {
    EXPECT_FALSE(one_push_on_one_shard);
  }
  EXPECT_EQ(status.global_step(),
            std::max(ledgers[0].applied_pushes(), ledgers[1].applied_pushes()));
  // The cluster stops cleanly only with every task running.
  EXPECT_TRUE(cluster_->RestartTask("worker/1").ok());
}

// Sync with every worker in each round deals its data to a slot per worker
// by round: worker/2 joining adds a slot and its SIGTERM takes it away, each
// at a round boundary (a checkpoint of the boundary, restored with the
// slots dealt again). The job stops exactly at max_steps, no record is
// trained twice, and every shard applied the same rounds.
void ElasticWorkersTest::RunSyncSlotsWithTheTopWorkerJoiningAndLeaving(const std::string& name) {
  constexpr int64_t kMaxSteps = 900;
  absl::StatusOr<std::string> job_id = cluster_->Submit(
      Job(name, 0, "update_mode: UPDATE_MODE_SYNC replicas_to_aggregate: 0", kMaxSteps));
  ASSERT_TRUE(job_id.ok()) << job_id.status();
  std::atomic<bool> ended{false};
  std::atomic<int> changes_done{0};
  std::atomic<double> joiner_steps{0};
  std::thread changes([&] {
    if (cluster_->AwaitStep(*job_id, kMaxSteps / 4, ended) < 0) return;
    ASSERT_TRUE(cluster_->cluster().AddWorker().ok());
    const absl::Time give_up = absl::Now() + absl::Minutes(1);
    while (JoinerSteps() < 2 && absl::Now() < give_up && !ended) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    ASSERT_GE(JoinerSteps(), 2) << "worker/2 did not train after joining";
    ++changes_done;
    if (cluster_->AwaitStep(*job_id, kMaxSteps / 2, ended) < 0) return;
    joiner_steps = JoinerSteps();
    absl::StatusOr<RemovedWorker> removed = cluster_->cluster().RemoveWorker(absl::Seconds(10));
    ASSERT_TRUE(removed.ok()) << removed.status();
    EXPECT_EQ(removed->task.name(), "worker/2");
    EXPECT_TRUE(removed->exit.ok()) << removed->exit.ToString();
    ++changes_done;
  });
  const JobRecord record = cluster_->Follow(*job_id);
  ended = true;
  changes.join();
  ASSERT_EQ(changes_done.load(), 2) << "the job ended before its workers had changed";

  const JobStatus& status = record.final_status;
  ASSERT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_MAX_STEPS);
  EXPECT_EQ(status.global_step(), kMaxSteps);
  EXPECT_EQ(status.rollbacks(), 0);
  const std::string log = CoordinatorLog();
  EXPECT_THAT(log, HasSubstr("its workers change from 2 to 3"));
  EXPECT_THAT(log, HasSubstr("its workers change from 3 to 2"));

  const std::vector<PushLedger> ledgers = testing_ledgers::FinalLedgers(status);
  ASSERT_EQ(static_cast<int>(ledgers.size()), num_ps_);
  const int64_t records = testing_ledgers::ExpectNoRecordTwice(ledgers[0], "ps/0");
  for (int i = 1; i < num_ps_; ++i) {
    EXPECT_EQ(testing_ledgers::ExpectNoRecordTwice(ledgers[i], absl::StrCat("ps/", i)), records);
    EXPECT_EQ(ledgers[i].applied_digest(), ledgers[0].applied_digest());
  }
  // Each round took a batch from every slot: 2, then 3, then 2 of them.
  EXPECT_GT(records, kMaxSteps * 2 * kBatchSize);
  EXPECT_LT(records, kMaxSteps * 3 * kBatchSize);
  std::printf(
      "%s: %s at step %lld; %lld records trained once each; worker/2 computed %.0f steps "
      "before it left\n",
      name.c_str(), JobState_Name(status.state()).c_str(),
      static_cast<long long>(status.global_step()), static_cast<long long>(records),
      joiner_steps.load());
}

TEST_F(ElasticWorkersTest, SyncSlotsAreDealtAgainWhenTheTopWorkerJoinsAndLeaves) {
  RunSyncSlotsWithTheTopWorkerJoiningAndLeaving("sync_slots_elastic");
}

// On one shard, which decides its rounds alone and learns the new count
// from the restore.
class ElasticWorkersOnOneShardTest : public ElasticWorkersTest {
 protected:
  ElasticWorkersOnOneShardTest() { num_ps_ = 1; }
};

TEST_F(ElasticWorkersOnOneShardTest, SyncSlotsAreDealtAgainWhenTheTopWorkerJoinsAndLeaves) {
  RunSyncSlotsWithTheTopWorkerJoiningAndLeaving("sync_slots_elastic_one_shard");
}

TEST_F(ElasticWorkersTest, AsyncJobTrainsEveryRecordOnceAsWorkersJoinLeaveAndDie) {
  // Async steps are fast: 8 epochs (4096 steps) leave each change time.
  RunWithWorkersComingAndGoing("async_elastic", 8, "");
}

TEST_F(ElasticWorkersTest, SyncWithABackupWorkerTrainsEveryRecordOnceAsWorkersJoinLeaveAndDie) {
  RunWithWorkersComingAndGoing("sync_elastic", 2,
                               "update_mode: UPDATE_MODE_SYNC replicas_to_aggregate: 1");
}

}  // namespace
}  // namespace pstrain
