// `pstrain local` heals as a Kubernetes Pod with restartPolicy OnFailure
// does: a worker, the evaluator, a parameter server and the coordinator,
// each killed with SIGKILL during a job, are started again on their
// addresses and the job ends SUCCEEDED (with --ps_replicas=1, each primary
// killed costs no rollback); a process that dies more often than
// --max_restarts allows stops the cluster, naming it. (--restart=never,
// today's stop at the first death, is in cli_test.)

#include <signal.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/process/child_process.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/pstrain_command.h"

namespace pstrain {
namespace {

// Every wait of these tests has a deadline well under the test's timeout.
constexpr absl::Duration kStepDeadline = absl::Seconds(90);
constexpr absl::Duration kRunDeadline = absl::Seconds(150);

const std::vector<std::string> kTaskFiles = {"coordinator-0", "ps-0",     "ps-1",
                                             "worker-0",      "worker-1", "evaluator-0"};

class LocalRestartTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTestFolder();
    run_dir_ = root_ + "/run";
    log_ = root_ + "/local.out";
  }

  // `pstrain local` with 2 parameter servers and 2 workers on job "heal":
  // ~500 steps a second, a checkpoint every 1000 steps.
  void Start(int64_t max_steps, const std::vector<std::string>& more_flags = {}) {
    testing_jobs::ClicksJob job;
    job.name = "heal";
    job.model_dir = "heal";
    job.num_examples = 400000;
    job.max_steps = max_steps;
    job.checkpoint_every_steps = 1000;
    const std::string spec = root_ + "/heal.pbtxt";
    std::ofstream(spec) << job.Text();
    std::vector<std::string> args = {"local",
                                     spec,
                                     "--checkpoint_root=" + root_,
                                     "--run_dir=" + run_dir_,
                                     "--coordinator_address=127.0.0.1:0",
                                     "--ps=2",
                                     "--workers=2"};
    args.insert(args.end(), more_flags.begin(), more_flags.end());
    local_ = LaunchPstrain(args, log_);
    ASSERT_NE(local_, nullptr);
    ASSERT_TRUE(WaitForText(log_, "step ", kStepDeadline)) << Output();
  }

  // SIGKILL to `task` ("worker/1"), its pid found as a user could: in the
  // ready file `pstrain local` has each process write. Waits for the line
  // that says it was restarted; the pid it killed.
  int KillAndAwaitRestart(const std::string& task) {
    const std::string file = absl::StrReplaceAll(task, {{"/", "-"}});
    const int pid = ReadyFilePid(run_dir_, file);
    EXPECT_GT(pid, 0) << "no ready file for " << task;
    // Killed only while the job trains, or the test proves nothing.
    EXPECT_EQ(Output().find("FINISHING"), std::string::npos) << "the job ended too soon";
    if (pid <= 0 || ::kill(pid, SIGKILL) != 0) {
      ADD_FAILURE() << "cannot kill " << task << " (pid " << pid << ")";
      return 0;
    }
    const std::string restarting = absl::StrCat(task, " (pid ", pid,
                                                ") exited with killed by signal 9 (Killed); "
                                                "restarting it");
    EXPECT_TRUE(WaitForText(log_, restarting, kStepDeadline)) << restarting << "\n" << Output();
    EXPECT_TRUE(WaitForText(log_, task + " restarted (pid ", kStepDeadline)) << Output();
    return pid;
  }

  // Waits for `pstrain local` to end; its exit code.
  int AwaitExit() {
    absl::StatusOr<ExitStatus> exit = local_->Wait(kRunDeadline);
    EXPECT_TRUE(exit.ok()) << exit.status() << "\n" << Output();
    return exit.ok() ? exit->exit_code : -1;
  }

  void ExpectEveryChildGone() {
    for (const std::string& file : kTaskFiles) {
      const int pid = ReadyFilePid(run_dir_, file);
      EXPECT_GT(pid, 0) << file;
      EXPECT_TRUE(ProcessIsGone(pid)) << file << " (pid " << pid << ") still runs";
    }
  }

  std::string Output() const { return ReadWholeFile(log_); }

  std::string root_;
  std::string run_dir_;
  std::string log_;
  std::unique_ptr<ChildProcess> local_;
};

TEST_F(LocalRestartTest,
       AWorkerTheEvaluatorAndAParameterServerKilledAreRestartedAndTheJobSucceeds) {
  ASSERT_NO_FATAL_FAILURE(Start(15000));
  const int worker = KillAndAwaitRestart("worker/1");
  const int evaluator = KillAndAwaitRestart("evaluator/0");
  // With a checkpoint to roll back to, as a lost shard usually finds.
  ASSERT_TRUE(WaitForText(log_, "checkpoint at step", kStepDeadline)) << Output();
  const int ps = KillAndAwaitRestart("ps/1");
  const int exit_code = AwaitExit();
  const std::string output = Output();
  std::cout << output << std::endl;
  EXPECT_EQ(exit_code, 0) << output;

  // Each restart names the task, how it ended, its count and its log.
  for (const auto& [task, file] : {std::pair<std::string, std::string>{"worker/1", "worker-1"},
                                   {"evaluator/0", "evaluator-0"},
                                   {"ps/1", "ps-1"}}) {
    const std::string line =
        absl::StrCat("restarting it now (restart 1; log: ", run_dir_, "/", file, ".log)");
    EXPECT_NE(output.find(task + " (pid "), std::string::npos) << task;
    EXPECT_NE(output.find(line), std::string::npos) << line << "\n" << output;
    // It came back on the address it had, where the others look for it.
    const std::string address_column = output.substr(output.find("  " + task + " "), 40);
    const std::string address = address_column.substr(address_column.find("127.0.0.1:"));
    EXPECT_NE(output.find(absl::StrCat(task, " restarted (pid ", ReadyFilePid(run_dir_, file),
                                       ") at ", address.substr(0, address.find(' ')))),
              std::string::npos)
        << task << " not back at " << address << "\n"
        << output;
  }
  // The log keeps the run that was killed above a marker.
  const std::string worker_log = ReadWholeFile(run_dir_ + "/worker-1.log");
  const size_t marker = worker_log.find(
      absl::StrCat("---- worker/1 (pid ", worker, ") exited with killed by signal 9"));
  ASSERT_NE(marker, std::string::npos) << worker_log;
  EXPECT_GT(marker, 0u) << "the killed run's lines are gone";
  EXPECT_NE(ReadWholeFile(run_dir_ + "/evaluator-0.log")
                .find(absl::StrCat("---- evaluator/0 (pid ", evaluator, ")")),
            std::string::npos);
  EXPECT_NE(ReadWholeFile(run_dir_ + "/ps-1.log").find(absl::StrCat("---- ps/1 (pid ", ps, ")")),
            std::string::npos);
  // The lost parameter server shows in the job's events as its rollback.
  EXPECT_NE(output.find("job heal-1 rolled back (1 time): ps/1 (a parameter server of the job) "
                        "restarted"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("job heal-1 SUCCEEDED at step"), std::string::npos) << output;
  EXPECT_NE(output.find("final evaluation (step "), std::string::npos) << output;
  EXPECT_NE(output.find("Every process exited cleanly"), std::string::npos) << output;
  ExpectEveryChildGone();
}

// With a hot-standby backup beside each shard (docs/design/replicas.md),
// each primary killed once costs no rollback: its backup takes over, and
// the restarted process waits out of the job.
TEST_F(LocalRestartTest, WithReplicasEachKilledPrimaryIsFailedOverWithoutARollback) {
  ASSERT_NO_FATAL_FAILURE(Start(15000, {"--ps_replicas=1"}));
  KillAndAwaitRestart("ps/0");
  ASSERT_TRUE(WaitForText(log_, "job heal-1 failed over (1 time)", kStepDeadline)) << Output();
  // Trained on since, past a checkpoint the second loss must not roll back to.
  ASSERT_TRUE(WaitForText(log_, "checkpoint at step", kStepDeadline)) << Output();
  KillAndAwaitRestart("ps/1");
  const int exit_code = AwaitExit();
  const std::string output = Output();
  std::cout << output << std::endl;
  EXPECT_EQ(exit_code, 0) << output;
  EXPECT_NE(output.find("each with a hot-standby backup"), std::string::npos) << output;
  EXPECT_NE(output.find("job heal-1 failed over (2 times): ps/1 (a parameter server of the job) "
                        "restarted"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("ps/3 took over as its primary"), std::string::npos) << output;
  EXPECT_EQ(output.find("rolled back"), std::string::npos) << output;
  EXPECT_NE(output.find("job heal-1 SUCCEEDED at step"), std::string::npos) << output;
  EXPECT_NE(output.find("Every process exited cleanly"), std::string::npos) << output;
  for (const std::string& file : {"ps-0", "ps-1", "ps-2", "ps-3"}) {
    const int pid = ReadyFilePid(run_dir_, file);
    EXPECT_GT(pid, 0) << file;
    EXPECT_TRUE(ProcessIsGone(pid)) << file << " (pid " << pid << ") still runs";
  }
}

TEST_F(LocalRestartTest, AKilledCoordinatorIsRestartedAndResumesTheJobToItsEnd) {
  ASSERT_NO_FATAL_FAILURE(Start(12000));
  ASSERT_TRUE(WaitForText(log_, "checkpoint at step", kStepDeadline)) << Output();
  KillAndAwaitRestart("coordinator/0");
  const int exit_code = AwaitExit();
  const std::string output = Output();
  std::cout << output << std::endl;
  EXPECT_EQ(exit_code, 0) << output;
  EXPECT_NE(output.find("the coordinator is back: job heal-1 is RUNNING"), std::string::npos)
      << output;
  EXPECT_NE(output.find("job heal-1 SUCCEEDED at step"), std::string::npos) << output;
  EXPECT_NE(output.find("final evaluation (step "), std::string::npos) << output;
  EXPECT_NE(output.find("Every process exited cleanly"), std::string::npos) << output;
  ExpectEveryChildGone();
}

TEST_F(LocalRestartTest, AProcessThatDiesMoreOftenThanMaxRestartsAllowsStopsTheCluster) {
  ASSERT_NO_FATAL_FAILURE(Start(1000000, {"--max_restarts=1"}));
  KillAndAwaitRestart("worker/0");
  const int again = ReadyFilePid(run_dir_, "worker-0");
  ASSERT_GT(again, 0);
  ASSERT_EQ(::kill(again, SIGKILL), 0);
  const int exit_code = AwaitExit();
  const std::string output = Output();
  std::cout << output << std::endl;
  EXPECT_EQ(exit_code, 1) << output;
  EXPECT_NE(output.find(absl::StrCat(
                "worker/0 (pid ", again,
                ") exited with killed by signal 9 (Killed) while the job ran; it was restarted 1 "
                "time within 10m, the most --max_restarts=1 allows; stopping the cluster.")),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("--- end of " + run_dir_ + "/worker-0.log ---"), std::string::npos)
      << output;
  ExpectEveryChildGone();
}

}  // namespace
}  // namespace pstrain
