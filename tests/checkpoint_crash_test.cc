// A process killed with SIGKILL in the middle of writing a checkpoint, on a
// real cluster (coordinator, 2 parameter servers and a worker as processes
// on loopback), never leaves a checkpoint that looks complete, and the job
// recovers:
// - a parameter server killed while its shard file of ckpt-<S> is half
//   written: ckpt-<S> does not exist, only ckpt-<S>.tmp; once the server is
//   back the job rolls back to the newest complete checkpoint (one
//   rollback, named in the job's status) and succeeds; the abandoned
//   temporary folder is removed;
// - the coordinator killed while it assembles ckpt-<S> (every shard file
//   written into ckpt-<S>.tmp, the MANIFEST not yet in place): ckpt-<S>
//   does not exist; restarted, the coordinator resumes the job from the
//   newest complete checkpoint, removes ckpt-<S>.tmp with a log line, and
//   the job succeeds.
//
// An MLP with wide hidden layers makes each shard file tens of MB, so that
// writing it takes long enough to be caught. The test polls the model_dir,
// freezes the writer with SIGSTOP as soon as it sees the moment it wants,
// checks from the files that the frozen process really is in the middle
// of the write, and only then kills it: a kill that would land outside the
// write is never made (the process is woken and the next checkpoint is
// tried instead, a bounded number of times), so the test cannot pass
// without having crashed a write.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/posix_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"

namespace pstrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_cluster::ClusterTest;
using testing_cluster::JobRecord;

constexpr int kNumPs = 2;
constexpr int64_t kCheckpointEverySteps = 20;
constexpr int64_t kMaxSteps = 120;
// Checkpoints tried before the test gives up on catching a write.
constexpr int kMaxCatchAttempts = 5;
// How long one checkpoint may take to come and be caught.
constexpr absl::Duration kCatchTimeout = absl::Seconds(40);

// 784-4096-784-10: two weight matrices of 3.2 million floats each, one per
// parameter server, each written with its Adagrad slot: shard files of
// about 26 MB.
std::string WideMlpJob(const std::string& name) {
  return absl::StrCat(R"pb(
    name: ")pb", name, R"pb("
    mode: JOB_MODE_TRAIN
    model { mlp { hidden_units: [ 4096, 784 ] } }
    train_data {
      fashion_mnist {}
      batch_size: 32
    }
    optimizer {
      adagrad {}
      learning_rate: 0.01
    }
    training { steps_per_loop: 10 }
    stop { max_steps: )pb", kMaxSteps, R"pb( }
    checkpoint { model_dir: ")pb", name, R"pb(" every_steps: )pb", kCheckpointEverySteps,
                      R"pb( max_to_keep: 2 }
  )pb");
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The names in `dir`, or none when it cannot be read (entries come and go
// while the job writes).
std::vector<std::string> ListNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  return names;
}

// Size of the file at `path`; nothing when it is gone.
std::optional<int64_t> FileSize(const std::string& path) {
  std::error_code error;
  const uintmax_t size = fs::file_size(path, error);
  if (error) return std::nullopt;
  return static_cast<int64_t>(size);
}

bool Exists(const std::string& path) {
  std::error_code error;
  return fs::exists(path, error);
}

// "name (size)" of each entry of `dir`, for messages.
std::string Describe(const std::string& dir) {
  std::vector<std::string> parts;
  for (const std::string& name : ListNames(dir)) {
    const std::optional<int64_t> size = FileSize(dir + "/" + name);
    parts.push_back(size.has_value() ? absl::StrCat(name, " (", *size, " bytes)") : name + "/");
  }
  return parts.empty() ? "(empty)" : absl::StrJoin(parts, ", ");
}

// Whether every thread of `pid` is stopped: /proc/<pid>/task/<tid>/stat
// reads "tid (comm) state ...". A process's own stat shows only its main
// thread, which stops before a thread that is inside a long write() does.
bool AllThreadsStopped(int pid) {
  const std::vector<std::string> threads = ListNames(absl::StrCat("/proc/", pid, "/task"));
  if (threads.empty()) return false;
  for (const std::string& tid : threads) {
    const std::string stat = ReadAll(absl::StrCat("/proc/", pid, "/task/", tid, "/stat"));
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size()) continue;  // gone meanwhile
    const char state = stat[paren + 2];
    if (state != 'T' && state != 't' && state != 'Z' && state != 'X') return false;
  }
  return true;
}

// Stops `pid` and returns once the kernel reports every thread of it
// stopped, so that the files it writes no longer change; false if it did
// not stop within 5 s.
bool Freeze(int pid) {
  if (::kill(pid, SIGSTOP) != 0) return false;
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (absl::Now() < deadline) {
    if (AllThreadsStopped(pid)) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

// A shard file being written inside ckpt-<step>.tmp:
// "shard-<i>-of-<n>.tmp-<pid>-<k>" (common/checkpoint/shard_file.cc).
struct ShardInProgress {
  int shard = -1;
  int pid = 0;
  std::string path;
};

std::optional<ShardInProgress> ParseShardTemporary(const std::string& dir,
                                                   const std::string& name) {
  for (int shard = 0; shard < kNumPs; ++shard) {
    const std::string prefix = ShardFileName(shard, kNumPs) + ".tmp-";
    if (!absl::StartsWith(name, prefix)) continue;
    const std::vector<std::string> parts = absl::StrSplit(name.substr(prefix.size()), '-');
    int pid = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &pid)) return std::nullopt;
    return ShardInProgress{shard, pid, dir + "/" + name};
  }
  return std::nullopt;
}

// The steps of ckpt-<step>.tmp folders in `model_dir`.
std::vector<int64_t> TemporarySteps(const std::string& model_dir) {
  std::vector<int64_t> steps;
  for (const std::string& name : ListNames(model_dir)) {
    const CheckpointEntry entry = ClassifyModelDirEntry(name);
    if (entry.kind == CheckpointEntryKind::kTemporary) steps.push_back(entry.step);
  }
  return steps;
}

// What the crash left, checked with the project's own reader and verifier:
// no ckpt-<step> folder lacks a valid MANIFEST, every one verifies whole
// (every shard file's size and CRC32C), and `crashed_step` is not listed
// as a checkpoint. Returns the newest complete checkpoint's step.
int64_t ExpectOnlyCompleteCheckpoints(Env& env, const std::string& model_dir,
                                      int64_t crashed_step) {
  int64_t newest = -1;
  for (const std::string& name : ListNames(model_dir)) {
    const CheckpointEntry entry = ClassifyModelDirEntry(name);
    if (entry.kind != CheckpointEntryKind::kCheckpoint) continue;
    const std::string path = model_dir + "/" + name;
    const absl::StatusOr<CheckpointManifest> manifest = VerifyCheckpoint(env, path);
    EXPECT_TRUE(manifest.ok()) << path << " looks like a finished checkpoint but does not verify: "
                               << manifest.status() << "; it holds " << Describe(path);
    if (manifest.ok()) newest = std::max(newest, entry.step);
  }
  const absl::StatusOr<std::vector<CheckpointRef>> listed = ListCheckpoints(env, model_dir);
  EXPECT_TRUE(listed.ok()) << listed.status();
  if (listed.ok()) {
    for (const CheckpointRef& ref : *listed) {
      EXPECT_NE(ref.step, crashed_step) << "the crashed checkpoint is listed: " << ref.path;
    }
  }
  const absl::StatusOr<RestorableCheckpointSearch> search = FindRestorableCheckpoint(env, model_dir);
  EXPECT_TRUE(search.ok()) << search.status();
  if (search.ok()) {
    EXPECT_TRUE(search->skipped.empty()) << "a damaged checkpoint: " << search->skipped[0].path
                                         << ": " << search->skipped[0].reason;
    EXPECT_TRUE(search->checkpoint.has_value()) << "no checkpoint to resume from";
    if (search->checkpoint.has_value()) {
      EXPECT_EQ(search->checkpoint->step, newest);
    }
  }
  return newest;
}

// Shard sizes of the newest complete checkpoint: what a whole shard file
// of this job weighs.
std::map<int, int64_t> WholeShardSizes(Env& env, const std::string& model_dir,
                                       absl::Time deadline) {
  while (absl::Now() < deadline) {
    absl::StatusOr<std::vector<CheckpointRef>> listed = ListCheckpoints(env, model_dir);
    if (listed.ok() && !listed->empty()) {
      absl::StatusOr<CheckpointManifest> manifest = ReadManifest(env, listed->back().path);
      if (manifest.ok()) {
        std::map<int, int64_t> sizes;
        for (const CheckpointShardFile& file : manifest->shards()) {
          sizes[file.shard_index()] = file.bytes();
        }
        std::printf("%s: shard files of %lld and %lld bytes\n", listed->back().path.c_str(),
                    static_cast<long long>(sizes[0]), static_cast<long long>(sizes[1]));
        return sizes;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "no complete checkpoint in " << model_dir << " in time";
  return {};
}

class CheckpointCrashTest : public ClusterTest {
 protected:
  CheckpointCrashTest() : ClusterTest(kNumPs, 1) { options_.evaluator = false; }

  void TearDown() override {
    if (cluster_ != nullptr) {
      EXPECT_TRUE(cluster_->cluster().CheckHealthy().ok());
    }
  }

  std::string Submit(const std::string& name) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(WideMlpJob(name));
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    return job_id.value_or("");
  }

  const LocalTask* TaskWithPid(int pid) {
    for (const LocalTask& task : cluster_->cluster().tasks()) {
      if (task.pid == pid) return &task;
    }
    return nullptr;
  }

  const LocalTask& Task(const std::string& name) {
    for (const LocalTask& task : cluster_->cluster().tasks()) {
      if (task.name() == name) return task;
    }
    ADD_FAILURE() << "no task " << name;
    static const LocalTask none;
    return none;
  }

  std::string TaskLog(const std::string& name) { return ReadAll(Task(name).log_path); }

  PosixEnv env_;
};

// What a kill caught.
struct Catch {
  int64_t step = 0;
  std::string task;
  std::string detail;
};

TEST_F(CheckpointCrashTest, ParameterServerKilledWhileWritingItsShardFile) {
  const absl::Time start = absl::Now();
  const std::string model_dir = cluster_->checkpoint_root() + "/ps-crash";
  const std::string job_id = Submit("ps-crash");
  ASSERT_FALSE(job_id.empty());
  const std::map<int, int64_t> whole = WholeShardSizes(env_, model_dir, start + kCatchTimeout);
  ASSERT_EQ(whole.size(), static_cast<size_t>(kNumPs));

  // Each attempt waits for the next ckpt-<S>.tmp and a shard file in it
  // that is less than half written, freezes the server writing it, and
  // kills it if the file is still partial and not yet renamed.
  std::optional<Catch> caught;
  std::vector<std::string> misses;
  int64_t last_tried = 0;
  for (int attempt = 1; attempt <= kMaxCatchAttempts && !caught.has_value(); ++attempt) {
    const absl::Time deadline = absl::Now() + kCatchTimeout;
    std::optional<ShardInProgress> writing;
    int64_t step = 0;
    while (!writing.has_value() && absl::Now() < deadline) {
      for (int64_t s : TemporarySteps(model_dir)) {
        if (s <= last_tried || s >= kMaxSteps) continue;
        const std::string dir = TemporaryCheckpointDir(model_dir, s);
        for (const std::string& name : ListNames(dir)) {
          std::optional<ShardInProgress> shard = ParseShardTemporary(dir, name);
          if (!shard.has_value()) continue;
          const std::optional<int64_t> size = FileSize(shard->path);
          if (size.has_value() && *size > 0 && *size < whole.at(shard->shard) / 2) {
            writing = shard;
            step = s;
            break;
          }
        }
        if (writing.has_value()) break;
      }
      if (!writing.has_value()) std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    ASSERT_TRUE(writing.has_value())
        << "no shard file was seen being written within " << kCatchTimeout << " (attempt "
        << attempt << "); model_dir holds " << Describe(model_dir);
    last_tried = step;
    const LocalTask* writer = TaskWithPid(writing->pid);
    ASSERT_NE(writer, nullptr) << writing->path << " is written by pid " << writing->pid
                               << ", which is no task of the cluster";
    ASSERT_EQ(writer->role, "ps") << writing->path;
    const std::string task = writer->name();
    const int pid = writer->pid;
    ASSERT_TRUE(Freeze(pid)) << task << " did not stop";

    // Frozen: the file is exactly as the kill will leave it.
    const std::optional<int64_t> size = FileSize(writing->path);
    const std::string final_name =
        TemporaryCheckpointDir(model_dir, step) + "/" + ShardFileName(writing->shard, kNumPs);
    if (!size.has_value() || *size >= whole.at(writing->shard) || Exists(final_name)) {
      misses.push_back(absl::StrCat("ckpt-", step, ": ", task, " had finished writing (",
                                    size.value_or(-1), " bytes)"));
      ASSERT_EQ(::kill(pid, SIGCONT), 0);
      continue;
    }
    absl::Status killed = cluster_->KillTask(task);
    ASSERT_TRUE(killed.ok()) << killed;
    const std::optional<int64_t> left = FileSize(writing->path);
    ASSERT_TRUE(left.has_value()) << writing->path << " vanished at the kill";
    EXPECT_EQ(*left, *size) << writing->path << " changed between the freeze and the kill";
    EXPECT_FALSE(Exists(final_name)) << task << " renamed its file before it died";
    caught = Catch{step, task,
                   absl::StrCat(fs::path(writing->path).filename().string(), " at ", *left, " of ",
                                whole.at(writing->shard), " bytes")};
  }
  for (const std::string& miss : misses) std::printf("missed: %s\n", miss.c_str());
  ASSERT_TRUE(caught.has_value()) << "no write caught in " << kMaxCatchAttempts
                                  << " checkpoints: " << absl::StrJoin(misses, "; ");
  std::printf("killed %s while it wrote ckpt-%lld: %s\n", caught->task.c_str(),
              static_cast<long long>(caught->step), caught->detail.c_str());

  // Before any restart: the crash left no checkpoint that looks complete.
  const std::string temporary = TemporaryCheckpointDir(model_dir, caught->step);
  std::printf("model_dir after the kill: %s\n%s: %s\n", Describe(model_dir).c_str(),
              temporary.c_str(), Describe(temporary).c_str());
  EXPECT_FALSE(Exists(CheckpointDir(model_dir, caught->step)));
  const int64_t newest = ExpectOnlyCompleteCheckpoints(env_, model_dir, caught->step);
  ASSERT_GT(newest, 0);
  ASSERT_LT(newest, caught->step);

  absl::Status restarted = cluster_->RestartTask(caught->task);
  ASSERT_TRUE(restarted.ok()) << restarted;
  const JobRecord record = cluster_->Follow(job_id);
  const JobStatus& status = record.final_status;
  std::printf("ended %s at step %lld, %d rollback(s): %s\n", JobState_Name(status.state()).c_str(),
              static_cast<long long>(status.global_step()), status.rollbacks(),
              status.last_rollback().c_str());
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.global_step(), kMaxSteps);
  EXPECT_EQ(status.rollbacks(), 1) << status.ShortDebugString();
  EXPECT_THAT(status.last_rollback(),
              HasSubstr(absl::StrCat(" to ", CheckpointDirName(newest), " at step ", newest)));

  // The coordinator gave up the checkpoint once the restarted server said
  // it knew no such job, and removed its folder; nothing unfinished is
  // left.
  const std::string log = TaskLog("coordinator/0");
  EXPECT_THAT(log, HasSubstr(absl::StrCat("checkpoint at step ", caught->step, " failed")));
  EXPECT_THAT(log, HasSubstr("removed the unfinished " + temporary)) << log;
  EXPECT_TRUE(TemporarySteps(model_dir).empty()) << Describe(model_dir);
  ExpectOnlyCompleteCheckpoints(env_, model_dir, -1);
  std::printf("the test took %s\n",
              absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(100)))
                  .c_str());
}

TEST_F(CheckpointCrashTest, CoordinatorKilledWhileAssemblingACheckpoint) {
  const absl::Time start = absl::Now();
  const std::string model_dir = cluster_->checkpoint_root() + "/coordinator-crash";
  const std::string job_id = Submit("coordinator-crash");
  ASSERT_FALSE(job_id.empty());
  ASSERT_EQ(WholeShardSizes(env_, model_dir, start + kCatchTimeout).size(),
            static_cast<size_t>(kNumPs));
  const std::string coordinator = "coordinator/0";

  // Each attempt waits for a ckpt-<S>.tmp that holds every shard file under
  // its final name (the shards are done; the coordinator checksums them
  // and writes the MANIFEST), freezes the coordinator, and kills it if
  // ckpt-<S> is still not in place.
  std::optional<Catch> caught;
  std::vector<std::string> misses;
  int64_t last_tried = 0;
  for (int attempt = 1; attempt <= kMaxCatchAttempts && !caught.has_value(); ++attempt) {
    const absl::Time deadline = absl::Now() + kCatchTimeout;
    int64_t step = 0;
    while (step == 0 && absl::Now() < deadline) {
      for (int64_t s : TemporarySteps(model_dir)) {
        if (s <= last_tried || s >= kMaxSteps) continue;
        const std::string dir = TemporaryCheckpointDir(model_dir, s);
        bool all_written = true;
        for (int shard = 0; shard < kNumPs; ++shard) {
          all_written = all_written && Exists(dir + "/" + ShardFileName(shard, kNumPs));
        }
        if (all_written) step = s;
      }
      if (step == 0) std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    ASSERT_NE(step, 0) << "no checkpoint was seen being assembled within " << kCatchTimeout
                       << " (attempt " << attempt << "); model_dir holds " << Describe(model_dir);
    last_tried = step;
    const int pid = Task(coordinator).pid;
    ASSERT_TRUE(Freeze(pid)) << "the coordinator did not stop";

    const std::string temporary = TemporaryCheckpointDir(model_dir, step);
    if (Exists(CheckpointDir(model_dir, step)) || !Exists(temporary)) {
      misses.push_back(absl::StrCat("ckpt-", step, ": already committed"));
      ASSERT_EQ(::kill(pid, SIGCONT), 0);
      continue;
    }
    const std::string contents = Describe(temporary);
    absl::Status killed = cluster_->KillTask(coordinator);
    ASSERT_TRUE(killed.ok()) << killed;
    caught = Catch{step, coordinator,
                   absl::StrCat(Exists(temporary + "/" + std::string(kManifestFileName))
                                    ? "MANIFEST written, folder not yet renamed"
                                    : "MANIFEST not yet written",
                                "; ckpt-", step, ".tmp held ", contents)};
  }
  for (const std::string& miss : misses) std::printf("missed: %s\n", miss.c_str());
  ASSERT_TRUE(caught.has_value()) << "no checkpoint caught in assembly in " << kMaxCatchAttempts
                                  << " checkpoints: " << absl::StrJoin(misses, "; ");
  std::printf("killed the coordinator while it assembled ckpt-%lld: %s\n",
              static_cast<long long>(caught->step), caught->detail.c_str());

  // Before the restart: no checkpoint that looks complete but is not.
  const std::string temporary = TemporaryCheckpointDir(model_dir, caught->step);
  std::printf("model_dir after the kill: %s\n", Describe(model_dir).c_str());
  EXPECT_FALSE(Exists(CheckpointDir(model_dir, caught->step)));
  EXPECT_TRUE(Exists(temporary));
  const int64_t newest = ExpectOnlyCompleteCheckpoints(env_, model_dir, caught->step);
  ASSERT_GT(newest, 0);
  ASSERT_LT(newest, caught->step);

  absl::Status restarted = cluster_->RestartTask(coordinator);
  ASSERT_TRUE(restarted.ok()) << restarted;
  const JobRecord record = cluster_->Follow(job_id);
  const JobStatus& status = record.final_status;
  std::printf("ended %s at step %lld, resumed from %s\n", JobState_Name(status.state()).c_str(),
              static_cast<long long>(status.global_step()), status.resumed_from().c_str());
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.global_step(), kMaxSteps);
  EXPECT_EQ(status.resumed_from_step(), newest) << status.ShortDebugString();

  // The resumed job removed the unfinished folder, and said so.
  const std::string log = TaskLog(coordinator);
  EXPECT_THAT(log, HasSubstr("removed the unfinished " + temporary)) << log;
  EXPECT_TRUE(TemporarySteps(model_dir).empty()) << Describe(model_dir);
  ExpectOnlyCompleteCheckpoints(env_, model_dir, -1);
  std::printf("the test took %s\n",
              absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(100)))
                  .c_str());
}

}  // namespace
}  // namespace pstrain
