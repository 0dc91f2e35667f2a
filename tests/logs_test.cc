// `pstrain logs` and `pstrain --version` against a real `pstrain local`
// cluster: two jobs run one after the other, and each one's logs hold its
// own lines and not the other's; --follow returns by itself when its job
// ends; unknown jobs and tasks are named with those there are; the
// daemons' pstrain_build_info carries the commit `pstrain --version` shows.

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/task_log_reader.h"
#include "common/net/http_get.h"
#include "common/process/child_process.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/pstrain_command.h"

namespace pstrain {
namespace {

constexpr absl::Duration kDeadline = absl::Seconds(120);

// `key=value` of a ready file in the run folder ("coordinator-0", "grpc").
std::string ReadyValue(const std::string& run_dir, const std::string& file,
                       const std::string& key) {
  for (absl::string_view line :
       absl::StrSplit(ReadWholeFile(run_dir + "/" + file + ".ready"), '\n')) {
    if (absl::ConsumePrefix(&line, key + "=")) return std::string(line);
  }
  return "";
}

struct PstrainRun {
  int exit_code = -1;
  std::string output;
};

PstrainRun Pstrain(const std::vector<std::string>& args) {
  ExitStatus exit;
  PstrainRun run;
  run.output = RunPstrain(args, &exit);
  run.exit_code = exit.exit_code;
  return run;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

class LogsTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTestFolder();
    run_dir_ = root_ + "/run";
    local_log_ = root_ + "/local.out";
    local_ = LaunchPstrain(
        {"local", "--keep_running", "--checkpoint_root=" + root_, "--run_dir=" + run_dir_,
         "--coordinator_address=127.0.0.1:0", "--workers=2", "--ps=1", "--no-progress"},
        local_log_);
    ASSERT_NE(local_, nullptr);
    ASSERT_TRUE(WaitForText(local_log_, "Running; press Ctrl-C", kDeadline))
        << ReadWholeFile(local_log_);
    coordinator_ = ReadyValue(run_dir_, "coordinator-0", "grpc");
    ASSERT_FALSE(coordinator_.empty());
  }

  void TearDown() override {
    if (local_ == nullptr) return;
    PstrainRun shutdown = Pstrain({"shutdown", "--coordinator_address=" + coordinator_});
    EXPECT_EQ(shutdown.exit_code, 0) << shutdown.output;
    absl::StatusOr<ExitStatus> exit = local_->Wait(kDeadline);
    ASSERT_TRUE(exit.ok()) << exit.status() << "\n" << ReadWholeFile(local_log_);
    EXPECT_EQ(exit->exit_code, 0) << ReadWholeFile(local_log_);
  }

  // Submits a small job named `name`; its id.
  std::string Submit(const std::string& name) {
    testing_jobs::ClicksJob job;
    job.name = name;
    job.model_dir = name;
    job.max_steps = 150;
    const std::string spec = root_ + "/" + name + ".pbtxt";
    std::ofstream(spec) << job.Text();
    PstrainRun submitted = Pstrain({"submit", spec, "--coordinator_address=" + coordinator_});
    EXPECT_EQ(submitted.exit_code, 0) << submitted.output;
    absl::string_view rest = submitted.output;
    const size_t at = rest.find("submitted job ");
    if (at == absl::string_view::npos) return "";
    rest.remove_prefix(at + std::string("submitted job ").size());
    return std::string(rest.substr(0, rest.find(' ')));
  }

  std::string root_;
  std::string run_dir_;
  std::string local_log_;
  std::string coordinator_;
  std::unique_ptr<ChildProcess> local_;
};

TEST_F(LogsTest, EachJobShowsItsOwnLinesAndFollowEndsWithTheJob) {
  const std::string first = Submit("first");
  ASSERT_FALSE(first.empty());
  PstrainRun watched =
      Pstrain({"watch", first, "--coordinator_address=" + coordinator_, "--no-progress"});
  ASSERT_EQ(watched.exit_code, 0) << watched.output;

  // Followed from its submission: the command returns by itself once the
  // job has ended, with the coordinator's line of that end.
  const std::string second = Submit("second");
  ASSERT_FALSE(second.empty());
  const std::string follow_log = root_ + "/follow.out";
  std::unique_ptr<ChildProcess> follow = LaunchPstrain(
      {"logs", second, "--run_dir=" + run_dir_, "--task=coordinator", "--follow"}, follow_log);
  ASSERT_NE(follow, nullptr);
  absl::StatusOr<ExitStatus> followed = follow->Wait(kDeadline);
  ASSERT_TRUE(followed.ok()) << followed.status() << "\n" << ReadWholeFile(follow_log);
  EXPECT_EQ(followed->exit_code, 0) << ReadWholeFile(follow_log);
  const std::string second_lines = ReadWholeFile(follow_log);
  EXPECT_TRUE(absl::StrContains(second_lines, "job " + second + " ended SUCCEEDED"))
      << second_lines;
  EXPECT_FALSE(absl::StrContains(second_lines, first)) << second_lines;
  // One task: its lines as they are, without the task's name.
  for (const std::string& line : Lines(second_lines)) {
    EXPECT_FALSE(absl::StartsWith(line, "[")) << line;
  }

  // Every task's lines of the first job, merged in time order, after the
  // coordinator the run folder names (no --coordinator_address).
  PstrainRun logs = Pstrain({"logs", first, "--run_dir=" + run_dir_});
  ASSERT_EQ(logs.exit_code, 0) << logs.output;
  for (const std::string& expected : std::vector<std::string>{
           "[coordinator/0] ", absl::StrCat("] job ", first, " ended SUCCEEDED"),
           absl::StrCat("[worker/0] "), absl::StrCat("[worker/1] "),
           absl::StrCat("job ", first, ": training"), std::string("[evaluator/0] ")}) {
    EXPECT_TRUE(absl::StrContains(logs.output, expected)) << expected << "\n" << logs.output;
  }
  EXPECT_FALSE(absl::StrContains(logs.output, second)) << logs.output;
  absl::Time previous = absl::InfinitePast();
  for (const std::string& line : Lines(logs.output)) {
    absl::string_view text = line;
    ASSERT_TRUE(absl::ConsumePrefix(&text, "[")) << line;
    text.remove_prefix(text.find("] ") + 2);
    if (std::optional<absl::Time> time = GlogLineTime(text, absl::LocalTimeZone())) {
      EXPECT_GE(*time, previous) << line;
      previous = *time;
    }
  }

  // One worker's lines only.
  PstrainRun worker = Pstrain({"logs", first, "--run_dir=" + run_dir_, "--task=worker/1"});
  ASSERT_EQ(worker.exit_code, 0) << worker.output;
  EXPECT_TRUE(absl::StrContains(worker.output, absl::StrCat("job ", first, ": training")))
      << worker.output;
  EXPECT_FALSE(absl::StrContains(worker.output, "ended SUCCEEDED")) << worker.output;
}

TEST_F(LogsTest, UnknownJobsAndTasksAreNamedWithThoseThereAre) {
  const std::string job = Submit("known");
  ASSERT_FALSE(job.empty());
  PstrainRun unknown_job = Pstrain({"logs", "nosuch-7", "--run_dir=" + run_dir_});
  EXPECT_EQ(unknown_job.exit_code, 2) << unknown_job.output;
  EXPECT_TRUE(absl::StrContains(unknown_job.output, "no job nosuch-7; the coordinator at " +
                                                        coordinator_ + " knows " + job + " ("))
      << unknown_job.output;

  PstrainRun unknown_task = Pstrain({"logs", job, "--run_dir=" + run_dir_, "--task=worker/7"});
  EXPECT_EQ(unknown_task.exit_code, 2) << unknown_task.output;
  EXPECT_TRUE(absl::StrContains(unknown_task.output,
                                "no task worker/7 in this cluster; its tasks: coordinator/0, "
                                "ps/0, worker/0, worker/1, evaluator/0 (run folder " +
                                    run_dir_ + ")"))
      << unknown_task.output;

  PstrainRun no_run_folder = Pstrain({"logs", job, "--run_dir=" + root_});
  EXPECT_EQ(no_run_folder.exit_code, 2) << no_run_folder.output;
  EXPECT_TRUE(absl::StrContains(no_run_folder.output, "no run folder of pstrain local"))
      << no_run_folder.output;

  PstrainRun no_job = Pstrain({"logs", "--run_dir=" + run_dir_});
  EXPECT_EQ(no_job.exit_code, 2) << no_job.output;
  PstrainRun watched =
      Pstrain({"watch", job, "--coordinator_address=" + coordinator_, "--no-progress"});
  EXPECT_EQ(watched.exit_code, 0) << watched.output;
}

// What a daemon reports on /metrics is what the client says it is.
TEST_F(LogsTest, TheDaemonsBuildInfoAgreesWithVersion) {
  PstrainRun version = Pstrain({"--version"});
  ASSERT_EQ(version.exit_code, 0) << version.output;
  const std::vector<std::string> lines = Lines(version.output);
  ASSERT_EQ(lines.size(), 2u) << version.output;
  absl::string_view commit = lines[1];
  ASSERT_TRUE(absl::ConsumePrefix(&commit, "commit: ")) << version.output;
  // The metric's label: the hash, "-dirty" for uncommitted changes, or
  // "unknown".
  std::string label = "unknown";
  if (commit != "unknown (unstamped build)") {
    absl::string_view hash = commit;
    const bool dirty = absl::ConsumeSuffix(&hash, " (with uncommitted changes)");
    label = absl::StrCat(hash, dirty ? "-dirty" : "");
  }
  const std::string version_number(absl::StripPrefix(lines[0], "pstrain "));
  for (const char* task : {"coordinator-0", "ps-0", "worker-0", "evaluator-0"}) {
    absl::StatusOr<std::string> page =
        HttpGet(ReadyValue(run_dir_, task, "metrics"), "/metrics", absl::Seconds(10));
    ASSERT_TRUE(page.ok()) << task << ": " << page.status();
    const std::string series = absl::StrCat("git_commit=\"", label, "\"");
    bool found = false;
    for (const std::string& line : Lines(*page)) {
      if (!absl::StartsWith(line, "pstrain_build_info{")) continue;
      found = true;
      EXPECT_TRUE(absl::StrContains(line, series)) << task << ": " << line;
      EXPECT_TRUE(absl::StrContains(line, absl::StrCat("version=\"", version_number, "\"")))
          << task << ": " << line;
    }
    EXPECT_TRUE(found) << task << " has no pstrain_build_info";
  }
}

}  // namespace
}  // namespace pstrain
