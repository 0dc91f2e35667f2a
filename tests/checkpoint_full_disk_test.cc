// A job on a full disk, as a user meets it: `pstrain local` with the job's
// model_dir on a tmpfs of 8 MB that the test mounts. A first run
// saves its checkpoint; the test then fills the disk, and the same job run
// again (it resumes from that checkpoint) can save none: pstrain prints a
// line for each failure with the cause ("No space left on device"), and the
// job fails after checkpoint.max_consecutive_failures of them, naming the
// checkpoint to resume from, which is intact. Mounting needs root (CI runs
// tests as root); without it the test is skipped and says why.

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/posix_env.h"
#include "common/process/child_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/machine_requirement.h"
#include "tests/pstrain_command.h"

namespace pstrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Click-log training without evaluation or export, a checkpoint every 50
// steps, failing after 2 failed checkpoints in a row.
std::string WriteSpec(const std::string& dir, int64_t max_steps) {
  testing_jobs::ClicksJob job;
  job.name = "full-disk";
  job.mode = "JOB_MODE_TRAIN";
  job.model_dir = "clicks";
  job.max_steps = max_steps;
  job.steps_per_loop = 10;
  job.checkpoint_every_steps = 50;
  const std::string checkpoint = "every_steps: 50 max_consecutive_failures: 2";
  const std::string text =
      absl::StrCat(absl::StrReplaceAll(job.Text(), {{"every_steps: 50", checkpoint}}),
                   "export { strategy: EXPORT_STRATEGY_NONE }\n");
  const std::string path = absl::StrCat(dir, "/full_disk_", max_steps, ".pbtxt");
  std::ofstream(path) << text;
  return path;
}

// Writes `path` until the filesystem holding it has no space left; whether
// it got there.
bool FillDisk(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::vector<char> block(4096, 'x');
  int error = 0;
  while (error == 0) {
    if (::write(fd, block.data(), block.size()) < 0 && errno != EINTR) error = errno;
  }
  ::close(fd);
  return error == ENOSPC;
}

class CheckpointFullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = absl::StrCat(::testing::TempDir(), "/checkpoint_full_disk");
    // The model_dir, not the whole root: the coordinator keeps its journal
    // in the root, and a coordinator that cannot start shows nothing of
    // checkpoints.
    root_ = work_ + "/root";
    disk_ = root_ + "/clicks";
    fs::remove_all(work_);
    fs::create_directories(disk_);
    if (::mount("tmpfs", disk_.c_str(), "tmpfs", 0, "size=8m") != 0) {
      PSTRAIN_REQUIRE_MACHINE(absl::StrCat("cannot mount a tmpfs at ", disk_, ": ",
                                           std::strerror(errno),
                                           "; this test needs root to give a job a full disk"));
    }
    mounted_ = true;
  }

  void TearDown() override {
    if (mounted_) ::umount2(disk_.c_str(), MNT_DETACH);
  }

  // `pstrain local SPEC` with the model_dir on the small disk and the
  // processes' logs off it; its output.
  std::string Local(const std::string& spec, const std::string& run, ExitStatus* exit) {
    return RunPstrain({"local", spec, "--checkpoint_root=" + root_,
                       "--run_dir=" + work_ + "/" + run, "--coordinator_address=127.0.0.1:0",
                       "--ps=1", "--workers=1", "--noevaluator", "--noprogress"},
                      exit);
  }

  std::string work_;
  std::string root_;
  std::string disk_;
  bool mounted_ = false;
};

TEST_F(CheckpointFullDiskTest, EachFailedCheckpointIsShownAndTheJobFailsKeepingTheLastGoodOne) {
  ExitStatus exit;
  const std::string first = Local(WriteSpec(work_, 100), "first", &exit);
  ASSERT_EQ(exit.exit_code, 0) << first;
  const std::string& model_dir = disk_;
  std::vector<std::string> saved;
  for (const fs::directory_entry& entry : fs::directory_iterator(model_dir)) {
    const std::string name = entry.path().filename();
    if (absl::StartsWith(name, "ckpt-")) saved.push_back(name);
  }
  ASSERT_FALSE(saved.empty()) << first;
  std::sort(saved.begin(), saved.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  const std::string last_good = saved.back();

  ASSERT_TRUE(FillDisk(disk_ + "/ballast")) << "could not fill " << disk_;
  const std::string second = Local(WriteSpec(work_, 1000000), "second", &exit);
  EXPECT_EQ(exit.exit_code, 1) << second;  // the job failed
  EXPECT_THAT(second, HasSubstr("failed (1 in a row; the job fails at 2)")) << second;
  EXPECT_THAT(second, HasSubstr("failed (2 in a row; the job fails at 2)")) << second;
  EXPECT_THAT(second, HasSubstr("No space left on device")) << second;
  EXPECT_THAT(second, HasSubstr("FAILED")) << second;
  EXPECT_THAT(second, HasSubstr("2 checkpoints failed in a row")) << second;
  EXPECT_THAT(second, HasSubstr("resume from " + last_good)) << second;

  // Nothing of the failed checkpoints is left; the last good one verifies.
  ASSERT_TRUE(fs::remove(disk_ + "/ballast"));
  for (const fs::directory_entry& entry : fs::directory_iterator(model_dir)) {
    const std::string name = entry.path().filename();
    if (absl::StartsWith(name, "ckpt-")) {
      EXPECT_TRUE(std::find(saved.begin(), saved.end(), name) != saved.end()) << name;
    }
  }
  PosixEnv env;
  absl::StatusOr<CheckpointManifest> manifest = VerifyCheckpoint(env, model_dir + "/" + last_good);
  EXPECT_TRUE(manifest.ok()) << manifest.status();
}

}  // namespace
}  // namespace pstrain
