// A damaged newest checkpoint is never restored, on a real cluster
// (coordinator, parameter servers and a worker as processes on loopback).
// A click-log job saves a checkpoint about every 100 steps and its final
// one at 300 (each named by the step its shards hold); each case copies its
// model_dir, damages ckpt-300 one way (a shard file truncated, one bit of it
// flipped, the file deleted, the MANIFEST removed or garbled), submits the
// same job again and checks that it resumes from the checkpoint before,
// that the coordinator's log names the damaged file and what is wrong with
// it, that the damaged folder is kept as ckpt-300.damaged, and that the job
// succeeds.
// What a crash in the middle of a checkpoint leaves (a ckpt-<step>.tmp
// folder, or a folder without its MANIFEST) is never taken for a checkpoint.
// A model_dir, warm_start_from or export_dir that leaves the checkpoint root
// through a symlink is refused at submit.

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/posix_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/cluster_fixture.h"

namespace pstrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_cluster::JobRecord;
using testing_cluster::TestCluster;

// Logistic regression on click logs, a checkpoint every 100 steps and none
// deleted, in `dir` under the checkpoint root.
std::string Job(const std::string& dir, int64_t max_steps) {
  testing_jobs::ClicksJob job;
  job.name = dir;
  job.mode = "JOB_MODE_TRAIN";
  job.model_dir = dir;
  job.num_examples = 50000;
  job.max_steps = max_steps;
  job.steps_per_loop = 10;
  job.checkpoint_every_steps = 100;
  return absl::StrReplaceAll(job.Text(), {{"every_steps: 100", "every_steps: 100 max_to_keep: 0"}});
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

// The first line of `log` that holds every one of `parts`, or "".
std::string LineWithAll(const std::string& log, const std::vector<std::string>& parts) {
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    bool all = true;
    for (const std::string& part : parts) all = all && absl::StrContains(line, part);
    if (all) return std::string(line);
  }
  return "";
}

// The steps of the checkpoints a job's status lists, oldest first.
std::vector<int64_t> CheckpointSteps(const JobStatus& status) {
  std::vector<int64_t> steps;
  for (const CheckpointInfo& checkpoint : status.checkpoints()) steps.push_back(checkpoint.step());
  return steps;
}

class CheckpointIntegrityTest : public testing_cluster::SharedClusterTest<CheckpointIntegrityTest> {
 protected:
  static void SetUpTestSuite() {
    LocalClusterOptions options;
    options.num_ps = 1;
    options.num_workers = 1;
    options.evaluator = false;
    if (!StartSharedCluster("checkpoint_integrity", options)) return;
    // The model_dir every case copies: two periodic checkpoints and the
    // final one, ckpt-300.
    const JobRecord source = Run(*cluster_, Job("source", 300));
    ASSERT_EQ(source.final_status.state(), JOB_STATE_SUCCEEDED)
        << source.final_status.ShortDebugString();
    source_steps_ = CheckpointSteps(source.final_status);
    ASSERT_EQ(source_steps_.size(), 3u) << source.final_status.ShortDebugString();
    ASSERT_EQ(source_steps_.back(), 300);
    for (int64_t step : source_steps_) {
      ASSERT_TRUE(fs::exists(SourceDir() + "/ckpt-" + std::to_string(step) + "/MANIFEST"))
          << step;
    }
  }

  // The checkpoint before ckpt-300 in the source model_dir.
  static int64_t PreviousStep() { return source_steps_[source_steps_.size() - 2]; }

  void TearDown() override {
    if (cluster_ != nullptr) {
      EXPECT_TRUE(cluster_->cluster().CheckHealthy().ok());
    }
  }

  static std::string SourceDir() { return cluster_->checkpoint_root() + "/source"; }

  static JobRecord Run(TestCluster& cluster, const std::string& spec) {
    absl::StatusOr<std::string> job_id = cluster.Submit(spec);
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok()) return {};
    return cluster.Follow(*job_id);
  }

  // A copy of the source model_dir named `name`; its path.
  static std::string CopyOfSource(const std::string& name) {
    const std::string dir = cluster_->checkpoint_root() + "/" + name;
    fs::remove_all(dir);
    fs::copy(SourceDir(), dir, fs::copy_options::recursive);
    return dir;
  }

  // Waits until the coordinator's log has a line holding every one of
  // `parts` (a warning is flushed at once, but give it a moment); that line,
  // or "" with the whole log in the failure message.
  static std::string CoordinatorLogLine(const std::vector<std::string>& parts) {
    const std::string& path = cluster_->cluster().coordinator().log_path;
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    std::string log;
    while (true) {
      log = ReadAll(path);
      const std::string line = LineWithAll(log, parts);
      if (!line.empty() || absl::Now() > deadline) {
        if (line.empty()) {
          ADD_FAILURE() << "no line of " << path << " holds all of ["
                        << absl::StrJoin(parts, " | ") << "]; the log:\n"
                        << log;
        }
        return line;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
  }

  // Damages ckpt-300 of a copy named `name` with `damage`, submits the job
  // again for 400 steps, and checks that it resumed from the checkpoint
  // before, said why it skipped ckpt-300 (a log line with every one of
  // `reason`), kept the damaged folder aside with its bytes and succeeded.
  void ExpectFallsBackToThePrevious(const std::string& name,
                                const std::function<void(const std::string&)>& damage,
                                const std::vector<std::string>& reason) {
    const std::string dir = CopyOfSource(name);
    const std::string newest = dir + "/ckpt-300";
    damage(newest);
    if (HasFatalFailure()) return;
    std::vector<std::string> before;
    for (const auto& entry : fs::directory_iterator(newest)) {
      before.push_back(entry.path().filename().string() + ":" +
                       std::to_string(fs::file_size(entry.path())));
    }
    std::sort(before.begin(), before.end());

    const JobRecord job = Run(*cluster_, Job(name, 400));
    const JobStatus& status = job.final_status;
    EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
    const int64_t previous = PreviousStep();
    EXPECT_EQ(status.resumed_from_step(), previous) << status.ShortDebugString();
    EXPECT_THAT(status.resumed_from(),
                HasSubstr(absl::StrCat("/", name, "/ckpt-", previous)));
    EXPECT_GE(status.global_step(), 400);
    // It trained on from there, not from zero and not from 300.
    const std::vector<ProgressEvent> progress = job.Progress();
    ASSERT_FALSE(progress.empty());
    EXPECT_GT(progress.front().global_step(), previous);

    std::vector<std::string> why = {"not resuming from ", "/" + name + "/ckpt-300: "};
    why.insert(why.end(), reason.begin(), reason.end());
    const std::string line = CoordinatorLogLine(why);
    EXPECT_THAT(line, HasSubstr("job "));
    CoordinatorLogLine({"moved the damaged ", "/" + name + "/ckpt-300 to ", "ckpt-300.damaged"});

    // Set aside as it was, not deleted; training saved new checkpoints.
    const std::string aside = newest + ".damaged";
    ASSERT_TRUE(fs::is_directory(aside)) << aside;
    std::vector<std::string> after;
    for (const auto& entry : fs::directory_iterator(aside)) {
      after.push_back(entry.path().filename().string() + ":" +
                      std::to_string(fs::file_size(entry.path())));
    }
    std::sort(after.begin(), after.end());
    EXPECT_EQ(after, before);
    EXPECT_TRUE(fs::exists(dir + "/ckpt-400/MANIFEST"));
  }

  static std::vector<int64_t> source_steps_;
};

std::vector<int64_t> CheckpointIntegrityTest::source_steps_;

constexpr char kShard[] = "shard-00000-of-00001";

TEST_F(CheckpointIntegrityTest, ATruncatedShardFileIsRefusedForThePreviousCheckpoint) {
  ExpectFallsBackToThePrevious(
      "truncated",
      [](const std::string& checkpoint) {
        const std::string path = checkpoint + "/" + kShard;
        const uintmax_t size = fs::file_size(path);
        ASSERT_GT(size, 100u);
        fs::resize_file(path, size / 2);
      },
      {kShard, "bytes, but the MANIFEST says", "(truncated)"});
}

TEST_F(CheckpointIntegrityTest, AFlippedBitInAShardFileIsRefusedForThePreviousCheckpoint) {
  ExpectFallsBackToThePrevious(
      "bit_flip",
      [](const std::string& checkpoint) {
        const std::string path = checkpoint + "/" + kShard;
        std::string bytes = ReadAll(path);
        ASSERT_GT(bytes.size(), 100u);
        bytes[bytes.size() / 2] ^= 0x10;
        WriteAll(path, bytes);
      },
      {kShard, "crc32c 0x", "but the MANIFEST says 0x", "(the file is damaged)"});
}

TEST_F(CheckpointIntegrityTest, AMissingShardFileIsRefusedForThePreviousCheckpoint) {
  ExpectFallsBackToThePrevious(
      "deleted_shard",
      [](const std::string& checkpoint) {
        ASSERT_TRUE(fs::remove(checkpoint + "/" + kShard));
      },
      {kShard, "missing; the MANIFEST lists it with"});
}

TEST_F(CheckpointIntegrityTest, AMissingManifestIsRefusedForThePreviousCheckpoint) {
  ExpectFallsBackToThePrevious(
      "no_manifest",
      [](const std::string& checkpoint) { ASSERT_TRUE(fs::remove(checkpoint + "/MANIFEST")); },
      {"MANIFEST: missing; the checkpoint was never completed"});
}

TEST_F(CheckpointIntegrityTest, AGarbledManifestIsRefusedForThePreviousCheckpoint) {
  ExpectFallsBackToThePrevious(
      "garbled_manifest",
      [](const std::string& checkpoint) {
        const std::string path = checkpoint + "/MANIFEST";
        std::string bytes = ReadAll(path);
        ASSERT_GT(bytes.size(), 20u);
        bytes[bytes.size() / 3] ^= 0x01;
        WriteAll(path, bytes);
      },
      {"MANIFEST: checksum mismatch"});
}

TEST_F(CheckpointIntegrityTest, APointerToAMissingCheckpointIsIgnored) {
  // The `checkpoint` file is a hint; the folders are the truth.
  const std::string dir = CopyOfSource("stale_pointer");
  WriteAll(dir + "/checkpoint", "900\n");
  const JobRecord job = Run(*cluster_, Job("stale_pointer", 400));
  const JobStatus& status = job.final_status;
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.resumed_from_step(), 300) << status.ShortDebugString();
  EXPECT_THAT(status.resumed_from(), HasSubstr("/stale_pointer/ckpt-300"));
  EXPECT_EQ(ReadAll(dir + "/checkpoint"), "400\n");
}

TEST_F(CheckpointIntegrityTest, WhatACrashMidCheckpointLeavesIsNeverRestored) {
  // A crash while ckpt-400 was being written leaves ckpt-400.tmp with part
  // of a shard file and no MANIFEST. A folder ckpt-500 without a MANIFEST
  // is what a writer that did not rename into place would leave.
  const std::string dir = CopyOfSource("crashed");
  const std::string tmp = dir + "/ckpt-400.tmp";
  ASSERT_TRUE(fs::create_directory(tmp));
  const std::string shard = ReadAll(dir + "/ckpt-300/" + kShard);
  WriteAll(tmp + "/" + kShard, shard.substr(0, shard.size() / 2));
  const std::string unfinished = dir + "/ckpt-500";
  ASSERT_TRUE(fs::create_directory(unfinished));
  WriteAll(unfinished + "/" + kShard, shard);

  PosixEnv env;
  absl::StatusOr<std::vector<CheckpointRef>> complete = ListCheckpoints(env, dir);
  ASSERT_TRUE(complete.ok()) << complete.status();
  std::vector<int64_t> steps;
  for (const CheckpointRef& ref : *complete) steps.push_back(ref.step);
  EXPECT_EQ(steps, source_steps_);

  const JobRecord job = Run(*cluster_, Job("crashed", 600));
  const JobStatus& status = job.final_status;
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.resumed_from_step(), 300) << status.ShortDebugString();
  EXPECT_THAT(status.resumed_from(), HasSubstr("/crashed/ckpt-300"));
  CoordinatorLogLine({"removed the unfinished ", "/crashed/ckpt-400.tmp"});
  CoordinatorLogLine({"not resuming from ", "/crashed/ckpt-500: ",
                      "MANIFEST: missing; the checkpoint was never completed"});
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_TRUE(fs::exists(unfinished + ".damaged/" + std::string(kShard)));
  // Training saved on past them, whole: every checkpoint it listed
  // verifies, the last at 600.
  const std::vector<int64_t> saved = CheckpointSteps(status);
  ASSERT_FALSE(saved.empty());
  EXPECT_EQ(saved.back(), 600);
  for (int64_t step : saved) {
    EXPECT_TRUE(VerifyCheckpoint(env, absl::StrCat(dir, "/ckpt-", step)).ok()) << step;
  }
}

TEST_F(CheckpointIntegrityTest, PathsThatLeaveTheRootThroughASymlinkAreRefused) {
  const std::string outside = ::testing::TempDir() + "/outside_the_root";
  fs::create_directories(outside + "/ckpt-100");
  const std::string link = cluster_->checkpoint_root() + "/escape";
  fs::remove(link);
  fs::create_directory_symlink(outside, link);

  struct Case {
    std::string field;
    std::string from;
    std::string to;
  };
  const std::string spec = Job("inside", 100);
  const std::vector<Case> cases = {
      {"checkpoint.model_dir", "model_dir: \"inside\"", "model_dir: \"escape/m\""},
      {"checkpoint.model_dir", "model_dir: \"inside\"", "model_dir: \"escape\""},
      {"checkpoint.warm_start_from", "model_dir: \"inside\"",
       "model_dir: \"inside\" warm_start_from: \"escape/ckpt-100\""},
      {"export.export_dir", "", "export { export_dir: \"escape/export\" }"},
  };
  for (const Case& c : cases) {
    const std::string text =
        c.from.empty() ? spec + c.to : absl::StrReplaceAll(spec, {{c.from, c.to}});
    ASSERT_NE(text, spec);
    absl::StatusOr<std::string> job_id = cluster_->Submit(text);
    if (job_id.ok()) {
      ADD_FAILURE() << c.to << " was accepted as job " << *job_id;
      cluster_->Stop(*job_id).IgnoreError();
      cluster_->Follow(*job_id);
      continue;
    }
    EXPECT_EQ(job_id.status().code(), absl::StatusCode::kInvalidArgument) << job_id.status();
    EXPECT_THAT(job_id.status().message(), HasSubstr(c.field));
    EXPECT_THAT(job_id.status().message(), HasSubstr("symlink"));
  }
  // Nothing was written through the link.
  EXPECT_FALSE(fs::exists(outside + "/m"));
  EXPECT_FALSE(fs::exists(outside + "/export"));
}

// Two parameter servers: one damaged shard file of two is enough to refuse
// the checkpoint, and both shards restore from the previous one.
TEST(CheckpointIntegrityTwoShardsTest, ADamagedSecondShardIsRefusedForThePreviousCheckpoint) {
  LocalClusterOptions options;
  options.num_ps = 2;
  options.num_workers = 1;
  options.evaluator = false;
  absl::StatusOr<std::unique_ptr<TestCluster>> started =
      TestCluster::Start("checkpoint_integrity_2ps", options);
  ASSERT_TRUE(started.ok()) << started.status();
  TestCluster& cluster = **started;
  const std::string spec = Job("two", 300);
  absl::StatusOr<std::string> first = cluster.Submit(spec);
  ASSERT_TRUE(first.ok()) << first.status();
  const JobRecord trained = cluster.Follow(*first);
  ASSERT_EQ(trained.final_status.state(), JOB_STATE_SUCCEEDED)
      << trained.final_status.ShortDebugString();

  const std::vector<int64_t> steps = CheckpointSteps(trained.final_status);
  ASSERT_GE(steps.size(), 2u);
  ASSERT_EQ(steps.back(), 300);
  const int64_t previous = steps[steps.size() - 2];
  const std::string dir = cluster.checkpoint_root() + "/two";
  const std::string path = dir + "/ckpt-300/shard-00001-of-00002";
  std::string bytes = ReadAll(path);
  ASSERT_GT(bytes.size(), 10u);
  bytes[bytes.size() - 5] ^= 0x01;
  WriteAll(path, bytes);

  absl::StatusOr<std::string> second = cluster.Submit(Job("two", 400));
  ASSERT_TRUE(second.ok()) << second.status();
  const JobRecord resumed = cluster.Follow(*second);
  const JobStatus& status = resumed.final_status;
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.resumed_from_step(), previous) << status.ShortDebugString();
  EXPECT_THAT(status.resumed_from(), HasSubstr(absl::StrCat("/two/ckpt-", previous)));
  const std::string log = ReadAll(cluster.cluster().coordinator().log_path);
  EXPECT_NE(LineWithAll(log, {"not resuming from ", "/two/ckpt-300: ",
                              "shard-00001-of-00002: crc32c 0x", "(the file is damaged)"}),
            "")
      << log;
  EXPECT_TRUE(fs::exists(dir + "/ckpt-300.damaged/shard-00001-of-00002"));
  EXPECT_TRUE(fs::exists(dir + "/ckpt-400/MANIFEST"));
}

}  // namespace
}  // namespace pstrain
