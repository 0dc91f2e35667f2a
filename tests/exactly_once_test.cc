// Exactly-once training across a worker's crash, on a real cluster
// (coordinator, 2 parameter servers, 2 workers as processes on loopback):
// an async job on synthetic click logs that ends by running out of data
// after kEpochs epochs, once undisturbed and once with kill -9 of a worker
// in the middle of its data lease at a seeded step (restarted a moment
// later, as Kubernetes would restart its pod); and the kill again with the
// same logs streamed from a TFRecord file, where the killed worker was
// reading blocks of the file and its successor starts the lease's rest in
// the middle of a window. And the same, undisturbed and with the kill, in
// sync mode with a backup worker (replicas_to_aggregate 1 of 2 workers),
// where the coordinator agrees each round's member with both shards
// (docs/design/sync_rounds.md): a push late on one shard and applied on the
// other would have its records trained twice.
//
// Both runs must train every record of every epoch exactly once and apply
// no push twice. The evidence is the push ledger each shard saves with the
// final checkpoint (server/ps/push_ledger.h): per data lease the records its
// applied pushes trained on, the examples behind them, and a count and an
// order-independent digest of the push ids. Before lost workers' leases were
// handed back without their trained part, the killed worker's pushed
// batches were trained a second time by whoever took its lease: two leases
// of the epoch overlapped, and the examples exceeded records x epochs.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/synthetic_clicks.h"
#include "common/data/tfrecord_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/cluster_fixture.h"
#include "tests/push_ledgers.h"

namespace pstrain {
namespace {

using testing_cluster::JobRecord;
using testing_cluster::TestCluster;

constexpr int64_t kNumExamples = 65536;
constexpr int32_t kEpochs = 2;
constexpr int64_t kBatchSize = 128;  // ClicksJob's
// One lease an epoch, 512 batches: each of the two workers holds one lease
// from its first push to its 512th, and a kill in between finds it in the
// middle of that lease with batches of it pushed. (With smaller leases a
// kill can land between two leases of a worker, when the coordinator has
// nothing of it to hand back.)
constexpr int64_t kRecordsPerLease = kNumExamples;
constexpr int64_t kLeaseSteps = kRecordsPerLease / kBatchSize;
constexpr int64_t kCheckpointEverySteps = 100;
// Reports every 50 steps: the killed worker has pushes the coordinator has
// not heard of.
constexpr int32_t kStepsPerLoop = 50;
// The latest global step a kill is asked for. The kill follows the first
// progress event at or past its step, which is at most kStepsPerLoop
// further; the killed worker has trained at most that event's step plus
// the fewer than kStepsPerLoop steps it has not reported: at least 100
// steps of its lease remain for the time the kill takes.
constexpr int64_t kLatestKillStep = kLeaseSteps - 2 * kStepsPerLoop - 100;

constexpr int32_t kFields = 8;  // synthetic_clicks' default

// Sync rounds of the first push of two workers' (one backup worker), on
// two shards: the coordinator agrees each round's member with both.
constexpr char kSyncWithABackupWorker[] =
    "update_mode: UPDATE_MODE_SYNC replicas_to_aggregate: 1";

// The job; with `streamed_file`, its training data is that TFRecord file of
// the same click logs (StreamedClicks), streamed in blocks of 512 records.
// `training`: more TrainingSpec fields (default: async).
std::string Job(const std::string& name, const std::string& streamed_file = "",
                const std::string& training = "") {
  testing_jobs::ClicksJob job;
  job.training = training;
  job.name = name;
  job.model_dir = name;
  job.mode = "JOB_MODE_TRAIN";
  job.num_examples = kNumExamples;
  job.max_steps = 0;  // the data ends the job
  job.steps_per_loop = kStepsPerLoop;
  job.checkpoint_every_steps = kCheckpointEverySteps;
  std::vector<std::pair<std::string, std::string>> changes = {
      {"batch_size: 128", absl::StrCat("batch_size: ", kBatchSize, " epochs: ", kEpochs)}};
  if (!streamed_file.empty()) {
    std::vector<std::string> fields;
    for (int f = 0; f < kFields; ++f) fields.push_back(absl::StrCat("\"field_", f, "\""));
    changes.push_back(
        {absl::StrCat("synthetic_clicks { num_examples: ", kNumExamples, " seed: 5 }"),
         absl::StrCat("tfrecord { paths: \"", streamed_file, "\" sparse_features: [",
                      absl::StrJoin(fields, ", "),
                      "] label: \"label\" } read_mode: READ_MODE_STREAMED "
                      "stream_block_records: 512")});
  }
  const std::string text = job.Text();
  for (const auto& [from, to] : changes) {
    EXPECT_NE(text.find(from), std::string::npos) << from << " in\n" << text;
  }
  return absl::StrReplaceAll(text, changes);
}

// The training logs of Job written as a TFRecord file of tf.Example, whose
// path it returns ("" when it cannot be written).
std::string StreamedClicks() {
  SyntheticClicksSource clicks;
  clicks.set_num_examples(kNumExamples);
  clicks.set_seed(5);
  FillSyntheticClicksDefaults(&clicks);
  absl::StatusOr<std::unique_ptr<SyntheticClicks>> source =
      SyntheticClicks::Create(clicks, /*test_split=*/false);
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return "";
  EXPECT_EQ((*source)->info().num_fields, kFields);
  const std::string path = testing::TempDir() + "/clicks.tfrecord";
  PosixEnv env;
  const absl::Status written = WriteTfRecordFile(env, path, **source);
  EXPECT_TRUE(written.ok()) << written;
  return written.ok() ? path : "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The push ledgers of the job's final checkpoint, whose data position is
// the last epoch, whole.
std::vector<PushLedger> FinalLedgers(const JobStatus& status) {
  DataPosition position;
  std::vector<PushLedger> ledgers = testing_ledgers::FinalLedgers(status, &position);
  EXPECT_EQ(position.epoch(), kEpochs - 1);
  EXPECT_EQ(position.finished_size(), 1);
  if (position.finished_size() == 1) {
    EXPECT_EQ(position.finished(0).begin(), 0);
    EXPECT_EQ(position.finished(0).end(), kNumExamples);
  }
  return ledgers;
}

class ExactlyOnceTest : public testing_cluster::SharedClusterTest<ExactlyOnceTest> {
 protected:
  static void SetUpTestSuite() {
    LocalClusterOptions options;
    options.num_ps = 2;
    options.num_workers = 2;
    options.evaluator = false;
    options.coordinator_flags = {absl::StrCat("--records_per_lease=", kRecordsPerLease)};
    if (!StartSharedCluster("exactly_once", options)) return;
  }

  // Runs job `name` (Job's text, or `job_text`); with kill_at_step > 0,
  // kills worker/1 with SIGKILL at the first progress event at or past that
  // global step (once worker/1 has pushed in this job) and restarts it.
  static JobRecord Run(const std::string& name, int64_t kill_at_step,
                       const std::string& job_text = "") {
    // worker/1 trains every job of the suite in one process.
    const absl::StatusOr<double> steps_before = WorkerSteps();
    EXPECT_TRUE(steps_before.ok()) << steps_before.status();
    absl::StatusOr<std::string> job_id = cluster_->Submit(job_text.empty() ? Job(name) : job_text);
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok() || !steps_before.ok()) return {};
    JobRecord record;
    if (kill_at_step <= 0) {
      record = cluster_->Follow(*job_id);
    } else {
      int64_t killed_at = -1;
      record = cluster_->FollowKilling(
          *job_id, "worker/1",
          [&](const ProgressEvent& progress) {
            return progress.global_step() >= kill_at_step && AwaitPushed(*steps_before);
          },
          absl::Milliseconds(500), &killed_at);
      EXPECT_GE(killed_at, kill_at_step) << "worker/1 was never killed";
    }
    const JobStatus& status = record.final_status;
    std::printf("%s: %s (%s) at step %lld\n", name.c_str(), JobState_Name(status.state()).c_str(),
                StopReason_Name(status.stop_reason()).c_str(),
                static_cast<long long>(status.global_step()));
    return record;
  }

  // The steps worker/1 has computed since it started.
  static absl::StatusOr<double> WorkerSteps() {
    return cluster_->MetricValue("worker/1", "pstrain_worker_steps_total");
  }

  // Waits until worker/1 has computed two steps more than `steps_before`:
  // the first one's push is then settled (a step's gradients are computed
  // only once the push before is), so worker/1 holds its lease with a push
  // of it applied. False when that does not happen within a minute.
  static bool AwaitPushed(double steps_before) {
    const absl::Time give_up = absl::Now() + absl::Minutes(1);
    absl::StatusOr<double> steps = WorkerSteps();
    while (!steps.ok() || *steps < steps_before + 2) {
      if (absl::Now() >= give_up) {
        ADD_FAILURE() << "worker/1 pushed nothing in a minute: "
                      << (steps.ok() ? absl::StrCat(*steps - steps_before, " steps")
                                     : steps.status().ToString());
        return false;
      }
      absl::SleepFor(absl::Milliseconds(10));
      steps = WorkerSteps();
    }
    return true;
  }

  // Kills worker/1 mid-lease in job `name` (Job(name, streamed_file,
  // training)) at a seeded step and checks that every record of every epoch
  // was trained exactly once, the killed worker's pushed batches included.
  static void ExpectAKilledWorkersBatchesTrainedOnce(const std::string& name,
                                                     const std::string& streamed_file = "",
                                                     const std::string& training = "");

  // An undisturbed job `name` (Job(name, "", training)) trained every
  // record of every epoch once on each shard, and both shards applied the
  // same pushes, as many as the global step.
  static void ExpectUndisturbedRunTrainsEveryRecordOnce(const std::string& name,
                                                        const std::string& training = "");

};


void ExactlyOnceTest::ExpectUndisturbedRunTrainsEveryRecordOnce(const std::string& name,
                                                                const std::string& training) {
  const JobRecord job = Run(name, 0, Job(name, "", training));
  const JobStatus& status = job.final_status;
  ASSERT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_END_OF_DATA);
  const std::vector<PushLedger> ledgers = FinalLedgers(status);
  ASSERT_EQ(ledgers.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const std::string shard = absl::StrCat("ps/", i);
    EXPECT_EQ(ledgers[i].applied_examples(), kNumExamples * kEpochs) << shard;
    // Every push reached both shards (the model's variables are on both),
    // and the global step counts them.
    EXPECT_EQ(ledgers[i].applied_pushes(), status.global_step()) << shard;
    testing_ledgers::ExpectEveryRecordOnce(ledgers[i], shard, kNumExamples, kEpochs);
  }
  EXPECT_EQ(ledgers[0].applied_digest(), ledgers[1].applied_digest());
  std::printf("%s: %lld pushes applied on each shard, digest %016llx\n", name.c_str(),
              static_cast<long long>(ledgers[0].applied_pushes()),
              static_cast<unsigned long long>(ledgers[0].applied_digest()));
}

TEST_F(ExactlyOnceTest, UndisturbedRunTrainsEveryRecordOnce) {
  ExpectUndisturbedRunTrainsEveryRecordOnce("calm");
}

TEST_F(ExactlyOnceTest, SyncWithABackupWorkerOnTwoShardsTrainsEveryRecordOnce) {
  // Each round takes one of the two workers' pushes; the other is late on
  // both shards, and its records are trained again later, once.
  ExpectUndisturbedRunTrainsEveryRecordOnce("sync_backup", kSyncWithABackupWorker);
}

void ExactlyOnceTest::ExpectAKilledWorkersBatchesTrainedOnce(const std::string& name,
                                                             const std::string& streamed_file,
                                                             const std::string& training) {
  std::mt19937 random(117);
  // Well before the end (1024 steps), inside worker/1's lease.
  const int64_t kill_at = std::uniform_int_distribution<int64_t>(60, kLatestKillStep)(random);
  const JobRecord job = Run(name, kill_at, Job(name, streamed_file, training));
  const JobStatus& status = job.final_status;
  ASSERT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_END_OF_DATA);
  EXPECT_EQ(status.rollbacks(), 0);
  // The coordinator kept the killed worker's trained records when it
  // handed the lease back.
  std::string coordinator_log;
  for (const LocalTask& task : cluster_->cluster().tasks()) {
    if (task.name() == "coordinator/0") coordinator_log = ReadFile(task.log_path);
  }
  std::smatch match;
  const std::regex kept("([0-9]+) records of 1 data lease were trained by its applied pushes");
  ASSERT_TRUE(std::regex_search(coordinator_log, match, kept))
      << "the coordinator did not keep the killed worker's trained records";
  const int64_t kept_records = std::stoll(match[1]);
  EXPECT_GT(kept_records, 0);
  EXPECT_EQ(kept_records % kBatchSize, 0) << "whole batches are pushed";

  const std::vector<PushLedger> ledgers = FinalLedgers(status);
  ASSERT_EQ(ledgers.size(), 2u);
  // A push the worker died in the middle of may have reached one shard
  // only; it counts as trained, and only there.
  const bool one_push_on_one_shard =
      testing_ledgers::ExpectTwoShardsTrainedEveryRecordOnce(ledgers, kNumExamples, kEpochs);
  // An agreed round is applied on every shard or on none.
  if (!training.empty()) EXPECT_FALSE(one_push_on_one_shard);
  // The global step counts what the shards applied, the killed worker's
  // pushes since its last report (never reported) included.
  const int64_t applied = std::max(ledgers[0].applied_pushes(), ledgers[1].applied_pushes());
  EXPECT_EQ(status.global_step(), applied);
  std::printf(
      "%s: killed at global step >= %lld; %lld records (%lld batches) of its lease "
      "were kept as trained and not handed out again; global step %lld; %lld pushes applied "
      "on ps/0, %lld on ps/1, digests %016llx %016llx%s\n",
      name.c_str(), static_cast<long long>(kill_at), static_cast<long long>(kept_records),
      static_cast<long long>(kept_records / kBatchSize),
      static_cast<long long>(status.global_step()),
      static_cast<long long>(ledgers[0].applied_pushes()),
      static_cast<long long>(ledgers[1].applied_pushes()),
      static_cast<unsigned long long>(ledgers[0].applied_digest()),
      static_cast<unsigned long long>(ledgers[1].applied_digest()),
      one_push_on_one_shard ? " (one push reached one shard only)" : "");
  EXPECT_TRUE(cluster_->cluster().CheckHealthy().ok());
}

TEST_F(ExactlyOnceTest, AWorkerKilledMidLeaseHasItsPushedBatchesTrainedOnce) {
  ExpectAKilledWorkersBatchesTrainedOnce("worker_killed");
}

TEST_F(ExactlyOnceTest, SyncWithABackupWorkerAWorkerKilledMidLeaseHasItsBatchesTrainedOnce) {
  ExpectAKilledWorkersBatchesTrainedOnce("sync_backup_killed", "", kSyncWithABackupWorker);
}

TEST_F(ExactlyOnceTest, AWorkerKilledMidLeaseOnStreamedDataHasItsPushedBatchesTrainedOnce) {
  const std::string file = StreamedClicks();
  ASSERT_FALSE(file.empty());
  ExpectAKilledWorkersBatchesTrainedOnce("streamed_worker_killed", file);
}

}  // namespace
}  // namespace pstrain
