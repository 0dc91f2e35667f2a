// A coordinator killed with SIGKILL (or stopped with SIGTERM, as a pod is)
// in the middle of a job and started again with the same flags finds the
// job in its journal (under the checkpoint root), resumes it under the same
// id from its newest checkpoint, and carries on to the end; a job that was
// queued runs afterwards, and no job id is given twice.

#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/cluster_fixture.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using testing_cluster::ClusterTest;
using testing_cluster::JobRecord;

constexpr char kCoordinator[] = "coordinator/0";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines of `text` that contain `needle`.
std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StrContains(line, needle)) lines.emplace_back(line);
  }
  return lines;
}

// The number a job id "<name>-<n>" ends in; -1 if none.
int64_t NumberOf(const std::string& job_id) {
  int64_t number = -1;
  const size_t dash = job_id.rfind('-');
  if (dash == std::string::npos || !absl::SimpleAtoi(job_id.substr(dash + 1), &number)) return -1;
  return number;
}

class CoordinatorRestartTest : public ClusterTest {
 protected:
  CoordinatorRestartTest() : ClusterTest(1, 1) {}

  std::string Submit(const testing_jobs::ClicksJob& job) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(job.Text());
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    std::cout << "submitted " << job_id.value_or("(refused)") << std::endl;
    return job_id.value_or("");
  }

  // Waits until the job has saved a checkpoint; its status then.
  JobStatus AwaitFirstCheckpoint(const std::string& job_id) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      absl::StatusOr<JobStatus> status = cluster_->Get(job_id);
      if (status.ok() && status->checkpoints_size() > 0) return *status;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << job_id << " saved no checkpoint within 60 s";
    return JobStatus();
  }

  // `signal` to the coordinator, then, once every other process has
  // noticed it is gone, the same command line again.
  void KillAndRestartCoordinator(int signal) {
    std::map<std::string, size_t> warned_before;
    for (const LocalTask& task : cluster_->cluster().tasks()) {
      if (task.role != "coordinator") warned_before[task.name()] = WaitWarnings(task).size();
    }
    const absl::Time killed = absl::Now();
    ASSERT_TRUE(cluster_->KillTask(kCoordinator, signal).ok());
    std::cout << "stopped the coordinator with " << (signal == SIGKILL ? "SIGKILL" : "SIGTERM")
              << " after " << absl::FormatDuration(absl::Trunc(absl::Now() - killed,
                                                                absl::Milliseconds(10)))
              << std::endl;
    // Each process says so at its next heartbeat (every 2 s).
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    for (const LocalTask& task : cluster_->cluster().tasks()) {
      if (task.role == "coordinator") continue;
      while (WaitWarnings(task).size() <= warned_before[task.name()]) {
        ASSERT_LT(absl::Now(), deadline) << task.name() << " did not say it waited:\n"
                                         << ReadAll(task.log_path);
        absl::SleepFor(absl::Milliseconds(100));
      }
    }
    std::cout << "every process noticed after "
              << absl::FormatDuration(absl::Trunc(absl::Now() - killed, absl::Milliseconds(10)))
              << std::endl;
    absl::Status restarted = cluster_->RestartTask(kCoordinator);
    ASSERT_TRUE(restarted.ok()) << restarted;
    std::cout << "the coordinator serves again after "
              << absl::FormatDuration(absl::Trunc(absl::Now() - killed, absl::Milliseconds(10)))
              << std::endl;
  }

  void PrintStatus(const std::string& when, const std::string& job_id) {
    absl::StatusOr<JobStatus> status = cluster_->Get(job_id);
    if (!status.ok()) {
      std::cout << when << ": " << job_id << ": " << status.status() << std::endl;
      return;
    }
    std::cout << when << ": " << job_id << " " << JobState_Name(status->state()) << ", step "
              << status->global_step() << ", resumed from step " << status->resumed_from_step()
              << " (" << status->resumed_from() << "), reason: '" << status->reason() << "'"
              << std::endl;
  }

  std::string CoordinatorLog() { return ReadAll(cluster_->cluster().coordinator().log_path); }

  // The warnings in `task`'s log that name the coordinator's address: what
  // a process says while it waits for the coordinator.
  std::vector<std::string> WaitWarnings(const LocalTask& task) {
    std::vector<std::string> warnings;
    const std::string address = cluster_->cluster().coordinator().grpc_address;
    for (const std::string& line : LinesWith(ReadAll(task.log_path), address)) {
      if (absl::StartsWith(line, "W")) warnings.push_back(line);
    }
    return warnings;
  }
};

// A job long enough to be killed in the middle of: ~20 s on one worker.
testing_jobs::ClicksJob LongJob(const std::string& name, int64_t max_steps) {
  testing_jobs::ClicksJob job;
  job.name = name;
  job.model_dir = name;
  job.num_examples = 400000;
  job.max_steps = max_steps;
  job.checkpoint_every_steps = 500;
  return job;
}

TEST_F(CoordinatorRestartTest, ARunningJobCarriesOnUnderItsIdAfterTheCoordinatorIsKilled) {
  const absl::Time start = absl::Now();
  const testing_jobs::ClicksJob job = LongJob("restart", 4000);
  const std::string job_id = Submit(job);
  ASSERT_FALSE(job_id.empty());
  const JobStatus before = AwaitFirstCheckpoint(job_id);
  ASSERT_GT(before.checkpoints_size(), 0);
  const int64_t first_checkpoint = before.checkpoints(0).step();
  std::cout << "first checkpoint at step " << first_checkpoint << "; global step "
            << before.global_step() << std::endl;

  KillAndRestartCoordinator(SIGKILL);
  PrintStatus("after the restart", job_id);

  const JobRecord record = cluster_->Follow(job_id);
  const JobStatus& status = record.final_status;
  std::cout << "ended: " << status.ShortDebugString().substr(0, 600) << std::endl;
  EXPECT_EQ(status.job_id(), job_id);
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.reason();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_MAX_STEPS) << status.reason();
  EXPECT_EQ(status.global_step(), job.max_steps);
  EXPECT_GE(status.resumed_from_step(), first_checkpoint) << status.ShortDebugString();
  EXPECT_THAT(status.resumed_from(), HasSubstr("/restart/ckpt-"));
  // The final checkpoint was evaluated: the evaluator followed the job too.
  EXPECT_EQ(status.last_eval_step(), job.max_steps) << status.ShortDebugString();

  const std::string log = CoordinatorLog();
  const std::vector<std::string> found = LinesWith(
      log, "found job " + job_id + " (RUNNING when the coordinator stopped): resuming it from "
                                   "its model_dir " + cluster_->checkpoint_root() + "/restart");
  EXPECT_EQ(found.size(), 1u) << log;
  for (const std::string& line : found) std::cout << "coordinator: " << line << std::endl;
  for (const std::string& line : LinesWith(log, "restored ")) {
    std::cout << "coordinator: " << line << std::endl;
  }
  // Every process that waited for the coordinator said so, naming where
  // it looked (a warning with its address), and registered again.
  for (const LocalTask& task : cluster_->cluster().tasks()) {
    if (task.role == "coordinator") continue;
    const std::string task_log = ReadAll(task.log_path);
    const std::vector<std::string> waited = WaitWarnings(task);
    const size_t registrations = LinesWith(task_log, "registered").size();
    std::cout << task.name() << ": " << registrations << " registrations; while it waited: "
              << (waited.empty() ? "(nothing)" : waited.front()) << std::endl;
    EXPECT_FALSE(waited.empty()) << task.name() << " did not say it waited:\n" << task_log;
    EXPECT_GE(registrations, 2u) << task.name() << " did not register again:\n" << task_log;
  }

  // The ids go on from the journal's counter: the next job's is new.
  testing_jobs::ClicksJob next;
  next.name = "restart";
  next.model_dir = "after-restart";
  next.max_steps = 50;
  const std::string next_id = Submit(next);
  EXPECT_GT(NumberOf(next_id), NumberOf(job_id)) << next_id << " after " << job_id;
  const JobStatus next_status = cluster_->Follow(next_id).final_status;
  EXPECT_EQ(next_status.state(), JOB_STATE_SUCCEEDED) << next_status.ShortDebugString();
  std::cout << next_id << " ended " << JobState_Name(next_status.state()) << " at step "
            << next_status.global_step() << "; the test took "
            << absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Seconds(1)))
            << std::endl;
  EXPECT_TRUE(cluster_->cluster().CheckHealthy().ok());
}

TEST_F(CoordinatorRestartTest, AfterSigtermTheJobResumesAndTheQueuedOneRunsAfterIt) {
  const testing_jobs::ClicksJob running = LongJob("first", 1500);
  const std::string running_id = Submit(running);
  testing_jobs::ClicksJob queued;
  queued.name = "second";
  queued.model_dir = "second";
  queued.max_steps = 100;
  const std::string queued_id = Submit(queued);
  ASSERT_FALSE(running_id.empty());
  ASSERT_FALSE(queued_id.empty());
  ASSERT_GT(AwaitFirstCheckpoint(running_id).checkpoints_size(), 0);
  PrintStatus("before the kill", queued_id);

  // As a pod is stopped: SIGTERM leaves the running job to resume.
  KillAndRestartCoordinator(SIGTERM);
  PrintStatus("after the restart", running_id);
  PrintStatus("after the restart", queued_id);
  absl::StatusOr<JobStatus> waiting = cluster_->Get(queued_id);
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_EQ(waiting->state(), JOB_STATE_QUEUED);

  const JobStatus first = cluster_->Follow(running_id).final_status;
  EXPECT_EQ(first.state(), JOB_STATE_SUCCEEDED) << first.ShortDebugString();
  EXPECT_EQ(first.global_step(), running.max_steps);
  EXPECT_GT(first.resumed_from_step(), 0) << first.ShortDebugString();
  const JobStatus second = cluster_->Follow(queued_id).final_status;
  std::cout << queued_id << " ended " << JobState_Name(second.state()) << " at step "
            << second.global_step() << std::endl;
  EXPECT_EQ(second.state(), JOB_STATE_SUCCEEDED) << second.ShortDebugString();
  EXPECT_EQ(second.global_step(), queued.max_steps);
  // It ran after the resumed job, from fresh variables.
  EXPECT_GE(second.start_unix_ms(), first.end_unix_ms());
  EXPECT_EQ(second.resumed_from_step(), 0);
  const std::string log = CoordinatorLog();
  EXPECT_THAT(log, HasSubstr("job " + running_id + " stays recorded as running"));
  EXPECT_THAT(log, HasSubstr("found job " + queued_id +
                             " (QUEUED when the coordinator stopped): queued again in its place"));
}

}  // namespace
}  // namespace pstrain
