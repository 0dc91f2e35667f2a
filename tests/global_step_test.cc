// The global step counts what the shards applied, on a real cluster of two
// parameter servers and three workers: an async job ends at max_steps plus
// at most the pushes in flight then, one per worker (a worker stops once a
// shard's answer says max_steps updates were applied, as TensorFlow's
// workers read the global step every step), however long its report
// interval; a worker killed mid-job leaves its applied pushes counted; and
// the job's status, its final checkpoint and the shards' push ledgers
// agree on the step.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/cluster_fixture.h"
#include "tests/push_ledgers.h"

namespace pstrain {
namespace {

using testing_cluster::JobRecord;

constexpr int kWorkers = 3;
constexpr int64_t kMaxSteps = 600;

// Async logistic regression on more records than the job trains, with a
// report every 100 steps: the interval a job used to overshoot by, per
// worker, when the global step moved by the reports.
std::string AsyncJob(const std::string& name) {
  testing_jobs::ClicksJob job;
  job.name = name;
  job.mode = "JOB_MODE_TRAIN";
  job.model_dir = name;
  job.num_examples = 200000;
  job.max_steps = kMaxSteps;
  job.steps_per_loop = 100;
  job.checkpoint_every_steps = 250;
  return job.Text();
}

class GlobalStepTest : public testing_cluster::ClusterTest {
 protected:
  GlobalStepTest() : ClusterTest(/*num_ps=*/2, kWorkers) { options_.evaluator = false; }

  // The job ended at max_steps, or past it by at most a push per worker,
  // and its status, final checkpoint and ledgers say the same step.
  static void ExpectTheStepTheShardsApplied(const JobRecord& job) {
    const JobStatus& status = job.final_status;
    ASSERT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
    EXPECT_EQ(status.stop_reason(), STOP_REASON_MAX_STEPS) << status.reason();
    EXPECT_GE(status.global_step(), kMaxSteps);
    EXPECT_LE(status.global_step(), kMaxSteps + kWorkers);
    ASSERT_FALSE(status.checkpoints().empty());
    EXPECT_TRUE(status.checkpoints().rbegin()->final());
    EXPECT_EQ(status.checkpoints().rbegin()->step(), status.global_step());
    const std::vector<PushLedger> ledgers = testing_ledgers::FinalLedgers(status);
    ASSERT_EQ(ledgers.size(), 2u);
    const int64_t applied = std::max(ledgers[0].applied_pushes(), ledgers[1].applied_pushes());
    EXPECT_EQ(status.global_step(), applied)
        << "ps/0 applied " << ledgers[0].applied_pushes() << ", ps/1 "
        << ledgers[1].applied_pushes();
    std::printf("ended at step %lld for max_steps %lld; ps/0 applied %lld pushes, ps/1 %lld\n",
                static_cast<long long>(status.global_step()), static_cast<long long>(kMaxSteps),
                static_cast<long long>(ledgers[0].applied_pushes()),
                static_cast<long long>(ledgers[1].applied_pushes()));
  }
};

TEST_F(GlobalStepTest, AsyncEndsWithinAPushPerWorkerOfMaxStepsRunAfterRun) {
  for (int run = 0; run < 3; ++run) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(AsyncJob(absl::StrCat("run-", run)));
    ASSERT_TRUE(job_id.ok()) << job_id.status();
    ExpectTheStepTheShardsApplied(cluster_->Follow(*job_id));
  }
}

TEST_F(GlobalStepTest, AKilledWorkersAppliedPushesAreCounted) {
  absl::StatusOr<std::string> job_id = cluster_->Submit(AsyncJob("killed"));
  ASSERT_TRUE(job_id.ok()) << job_id.status();
  int64_t killed_at = -1;
  // Killed between two of its reports: the pushes it made since its last
  // one are applied, and only the shards know of them.
  const JobRecord job = cluster_->FollowKilling(
      *job_id, "worker/1",
      [](const ProgressEvent& progress) { return progress.global_step() >= 150; },
      absl::Seconds(1), &killed_at);
  ASSERT_GE(killed_at, 150);
  ExpectTheStepTheShardsApplied(job);
}

}  // namespace
}  // namespace pstrain
