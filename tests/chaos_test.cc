// Faults on a real cluster (coordinator, 2 parameter servers, 2 workers and
// an evaluator as processes on loopback) while a job trains: kill -9 of a
// parameter server, a worker, the evaluator or the coordinator, each
// restarted a moment later as Kubernetes would restart its pod, and a
// worker frozen (SIGSTOP) past its heartbeat deadline, then woken; and the
// streams to ps/1 (which its peers reach through a TCP proxy) reset or
// slowed down. At seeded, random moments.
//
// Each time the job must still end SUCCEEDED at its max_steps, with a final
// accuracy within one percentage point of an undisturbed run of the same
// job; a lost parameter server must cost a rollback to the newest
// checkpoint (the job's status counts it), nothing more; and the data
// position saved in the final checkpoint must be whole (every finished
// range inside the data, none overlapping).

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/binary_locator.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/posix_env.h"
#include "common/process/child_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/cluster_fixture.h"
#include "tests/tcp_fault_proxy.h"

namespace pstrain {
namespace {

using testing_cluster::JobRecord;
using testing_cluster::TestCluster;
using testing_net::TcpFaultProxy;

constexpr int64_t kMaxSteps = 2400;
constexpr int64_t kCheckpointEverySteps = 200;
constexpr int64_t kNumExamples = 60000;

// The coordinator declares a member lost after this long without a
// heartbeat: shorter than its default (10 s) so that a frozen worker is
// lost, and wakes, while the job still trains.
constexpr absl::Duration kHeartbeatTimeout = absl::Seconds(4);

std::string Job(const std::string& name) {
  testing_jobs::ClicksJob job;
  job.name = name;
  job.model_dir = name;
  job.num_examples = kNumExamples;
  job.max_steps = kMaxSteps;
  job.steps_per_loop = 20;
  job.checkpoint_every_steps = kCheckpointEverySteps;
  job.eval = "metrics: \"accuracy\"";
  return job.Text();
}

// One fault: at global step `at_step`, `act` does the damage to the
// cluster running job `job_id`.
struct Fault {
  std::string what;
  int64_t at_step = 0;
  std::function<absl::Status(TestCluster&, const std::string& job_id)> act;
};

// A pod's restart takes a moment; the others notice the gap meanwhile.
constexpr absl::Duration kQuickRestart = absl::Milliseconds(500);

absl::Status KillAndRestart(TestCluster& cluster, const std::string& task,
                            absl::Duration down_for) {
  if (absl::Status killed = cluster.KillTask(task); !killed.ok()) return killed;
  absl::SleepFor(down_for);
  return cluster.RestartTask(task);
}

// Wakes the process while the job still trains, so that whatever it had
// in flight meets a cluster that has moved on.
absl::Status FreezeAndWake(TestCluster& cluster, const std::string& job_id,
                           const std::string& task) {
  int pid = 0;
  for (const LocalTask& t : cluster.cluster().tasks()) {
    if (t.name() == task) pid = t.pid;
  }
  if (pid <= 0) return absl::NotFoundError(absl::StrCat("no process for ", task));
  if (::kill(pid, SIGSTOP) != 0) return absl::InternalError("SIGSTOP failed");
  // Past its deadline: the coordinator has marked it lost.
  const absl::Status lost = cluster.AwaitMemberState(task, MEMBER_STATE_LOST, absl::Minutes(1));
  if (::kill(pid, SIGCONT) != 0) return absl::InternalError("SIGCONT failed");
  if (!lost.ok()) return lost;
  absl::StatusOr<JobStatus> status = cluster.Get(job_id);
  if (!status.ok()) return status.status();
  if (status->state() != JOB_STATE_RUNNING) {
    return absl::FailedPreconditionError(absl::StrCat(task, " woke after the job ended (",
                                                      JobState_Name(status->state()),
                                                      "): the job is too short for this test"));
  }
  return absl::OkStatus();
}

Fault KillFault(const std::string& task, int64_t at_step, absl::Duration down_for = kQuickRestart) {
  return {absl::StrCat("kill -9 ", task, ", back after ", absl::FormatDuration(down_for)), at_step,
          [task, down_for](TestCluster& cluster, const std::string&) {
            return KillAndRestart(cluster, task, down_for);
          }};
}

// Kills parameter server `task` and restarts it once the job has noticed
// it is lost (the coordinator's heartbeat deadline passed) and waits for
// it: the job must roll back, not just ride out a short gap.
Fault LostShardFault(const std::string& task, int64_t at_step) {
  return {absl::StrCat("kill -9 ", task, ", back once the job waits for it"), at_step,
          [task](TestCluster& cluster, const std::string& job_id) {
            if (absl::Status killed = cluster.KillTask(task); !killed.ok()) return killed;
            const absl::StatusOr<JobStatus> waiting = cluster.AwaitStatus(
                job_id,
                [&](const JobStatus& status) {
                  return absl::StrContains(status.reason(), "training paused: waiting for " + task);
                },
                absl::Minutes(1));
            if (!waiting.ok()) return waiting.status();
            return cluster.RestartTask(task);
          }};
}

// The calls the workers made again after an attempt found a parameter
// server unreachable, counted in their metrics.
int64_t UnavailableRetries(TestCluster& cluster) {
  int64_t retries = 0;
  for (const char* worker : {"worker/0", "worker/1"}) {
    for (const char* cause : {"pull_unavailable", "push_unavailable"}) {
      const absl::StatusOr<double> value =
          cluster.MetricValue(worker, "pstrain_worker_retries_total", {{"cause", cause}});
      EXPECT_TRUE(value.ok()) << worker << ": " << value.status();
      retries += static_cast<int64_t>(value.value_or(0));
    }
  }
  return retries;
}

Fault FreezeFault(const std::string& task, int64_t at_step) {
  return {"SIGSTOP " + task, at_step, [task](TestCluster& cluster, const std::string& job_id) {
            return FreezeAndWake(cluster, job_id, task);
          }};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int Occurrences(const std::string& text, const std::string& part) {
  int count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

double Accuracy(const JobStatus& status) {
  auto it = status.last_eval_metrics().find("accuracy");
  return it == status.last_eval_metrics().end() ? -1 : it->second;
}

class ChaosTest : public testing_cluster::SharedClusterTest<ChaosTest> {
 protected:
  static void SetUpTestSuite() {
    LocalClusterOptions options;
    options.num_ps = 2;
    options.num_workers = 2;
    options.coordinator_flags = {
        "--heartbeat_interval_secs=0.5",
        absl::StrCat("--heartbeat_timeout_secs=", absl::ToInt64Seconds(kHeartbeatTimeout))};
    // Whoever dials ps/1 (workers, the coordinator) goes through the proxy;
    // its own heartbeats do not.
    absl::StatusOr<std::unique_ptr<TcpFaultProxy>> proxy = TcpFaultProxy::Start();
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = proxy->release();
    options.task_flags["ps/1"] = {"--advertise_address=" + proxy_->address()};
    if (!StartSharedCluster("chaos", options)) return;
    for (const LocalTask& task : cluster_->cluster().tasks()) {
      if (task.name() == "ps/1") {
        ASSERT_TRUE(proxy_->Forward(task.grpc_address).ok());
      }
    }
    // The undisturbed run every disturbed one is held against.
    const JobRecord calm = Run("calm", {});
    ASSERT_EQ(calm.final_status.state(), JOB_STATE_SUCCEEDED)
        << calm.final_status.ShortDebugString();
    calm_accuracy_ = Accuracy(calm.final_status);
    std::printf("undisturbed: step %lld, accuracy %.4f\n",
                static_cast<long long>(calm.final_status.global_step()), calm_accuracy_);
  }

  static void TearDownTestSuite() {
    cluster_.reset();
    delete proxy_;
    proxy_ = nullptr;
  }

  // Runs job `name`, doing each fault in order once the global step
  // reaches its step.
  // `on_submit`, if given, sees the job id first.
  static JobRecord Run(const std::string& name, std::vector<Fault> faults,
                       const std::function<void(const std::string&)>& on_submit = nullptr) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(Job(name));
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok()) return {};
    if (on_submit) on_submit(*job_id);
    std::atomic<bool> ended{false};
    std::thread chaos([&] {
      for (const Fault& fault : faults) {
        if (cluster_->AwaitStep(*job_id, fault.at_step, ended) < 0) return;
        const absl::Time start = absl::Now();
        const absl::Status done = fault.act(*cluster_, *job_id);
        EXPECT_TRUE(done.ok()) << fault.what << ": " << done;
        std::printf("%s: %s at step >= %lld, done in %s\n", name.c_str(), fault.what.c_str(),
                    static_cast<long long>(fault.at_step),
                    absl::FormatDuration(absl::Now() - start).c_str());
      }
    });
    JobRecord record = cluster_->Follow(*job_id);
    ended = true;
    chaos.join();
    const JobStatus& status = record.final_status;
    std::printf("%s: %s at step %lld, accuracy %.4f, %d rollbacks%s%s\n", name.c_str(),
                JobState_Name(status.state()).c_str(), static_cast<long long>(status.global_step()),
                Accuracy(status), status.rollbacks(), status.rollbacks() > 0 ? ": " : "",
                status.last_rollback().c_str());
    return record;
  }

  // What every disturbed run must show.
  static void ExpectSurvived(const JobRecord& job) {
    const JobStatus& status = job.final_status;
    ASSERT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
    EXPECT_EQ(status.stop_reason(), STOP_REASON_MAX_STEPS);
    EXPECT_GE(status.global_step(), kMaxSteps);
    EXPECT_NEAR(Accuracy(status), calm_accuracy_, 0.01);
    ExpectWholeDataPosition(status);
    // The cluster is whole again for the next run.
    EXPECT_TRUE(cluster_->cluster().CheckHealthy().ok());
  }

  // The final checkpoint's data position: finished ranges inside the data,
  // sorted, none overlapping another.
  static void ExpectWholeDataPosition(const JobStatus& status) {
    ASSERT_GT(status.checkpoints_size(), 0);
    const CheckpointInfo& last = status.checkpoints(status.checkpoints_size() - 1);
    PosixEnv env;
    absl::StatusOr<CheckpointManifest> manifest = ReadManifest(env, last.path());
    ASSERT_TRUE(manifest.ok()) << manifest.status();
    const DataPosition& position = manifest->data_position();
    EXPECT_EQ(position.num_records(), kNumExamples);
    int64_t end = 0;
    for (const RecordRange& range : position.finished()) {
      EXPECT_LT(range.begin(), range.end());
      EXPECT_GE(range.begin(), end) << "overlapping finished ranges in " << last.path();
      EXPECT_LE(range.end(), kNumExamples);
      end = range.end();
    }
  }

  // Every worker's log, one after the other.
  static std::string WorkerLogs() {
    std::string logs;
    for (const LocalTask& task : cluster_->cluster().tasks()) {
      if (task.role == "worker") logs += ReadFile(task.log_path);
    }
    return logs;
  }

  static TcpFaultProxy* proxy_;
  static double calm_accuracy_;
};

TcpFaultProxy* ChaosTest::proxy_ = nullptr;
double ChaosTest::calm_accuracy_ = 0;

// The seeded moment of a fault: after the first checkpoint, well before
// the end.
int64_t SomeStep(std::mt19937& random) {
  return std::uniform_int_distribution<int64_t>(kCheckpointEverySteps + 50, kMaxSteps / 2)(random);
}

TEST_F(ChaosTest, AKilledParameterServerCostsARollbackToTheNewestCheckpoint) {
  std::mt19937 random(91);
  const int64_t retries_before = UnavailableRetries(*cluster_);
  const JobRecord job = Run("ps_killed", {LostShardFault("ps/1", SomeStep(random))});
  ExpectSurvived(job);
  EXPECT_EQ(job.final_status.rollbacks(), 1);
  EXPECT_THAT(job.final_status.last_rollback(), testing::HasSubstr("ps/1"));
  EXPECT_THAT(job.final_status.last_rollback(), testing::HasSubstr("rolled back from step"));
  // While it waited, the job said what for.
  bool said = false;
  for (const JobEvent& event : job.events) {
    said |= event.has_status() &&
            absl::StrContains(event.status().reason(), "training paused: waiting for ps/1");
  }
  EXPECT_TRUE(said) << "no status while paused named ps/1";
  // The workers' calls to it failed meanwhile, and they tried again.
  EXPECT_GT(UnavailableRetries(*cluster_), retries_before);
}

TEST_F(ChaosTest, AKilledWorkerIsReplacedAndItsDataHandedOutAgain) {
  std::mt19937 random(92);
  const JobRecord job = Run("worker_killed", {KillFault("worker/1", SomeStep(random))});
  ExpectSurvived(job);
  EXPECT_EQ(job.final_status.rollbacks(), 0);
}

TEST_F(ChaosTest, AKilledEvaluatorComesBackAndEvaluatesTheFinalCheckpoint) {
  std::mt19937 random(93);
  const JobRecord job = Run("evaluator_killed", {KillFault("evaluator/0", SomeStep(random))});
  ExpectSurvived(job);
  EXPECT_EQ(job.final_status.last_eval_step(), job.final_status.global_step());
}

TEST_F(ChaosTest, AFrozenWorkerThatWakesAfterItsDeadlineCorruptsNothing) {
  // Early, so that the job still trains when the worker wakes.
  const JobRecord job = Run("worker_frozen", {FreezeFault("worker/0", kCheckpointEverySteps)});
  ExpectSurvived(job);
  EXPECT_EQ(job.final_status.rollbacks(), 0);
  // It dropped what it held when it woke, and rejoined.
  std::string log;
  for (const LocalTask& task : cluster_->cluster().tasks()) {
    if (task.name() == "worker/0") log = ReadFile(task.log_path);
  }
  EXPECT_THAT(log,
              testing::HasSubstr("worker was marked lost during job " + job.final_status.job_id()));
}

TEST_F(ChaosTest, AKilledCoordinatorComesBackAndResumesTheJob) {
  std::mt19937 random(94);
  // A user follows the job with `pstrain watch` meanwhile.
  std::unique_ptr<ChildProcess> watch;
  const char* kept = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const std::string watch_log =
      absl::StrCat(kept != nullptr ? kept : testing::TempDir().c_str(), "/chaos-watch.log");
  const JobRecord job = Run(
      "coordinator_killed", {KillFault("coordinator/0", SomeStep(random))},
      [&](const std::string& job_id) {
        absl::StatusOr<std::string> pstrain = LocateBinary("pstrain", "");
        ASSERT_TRUE(pstrain.ok()) << pstrain.status();
        absl::StatusOr<std::unique_ptr<ChildProcess>> started = ChildProcess::Start(
            {*pstrain,
             {"watch", job_id,
              "--coordinator_address=" + cluster_->cluster().coordinator().grpc_address,
              "--no-progress"},
             {},
             watch_log});
        ASSERT_TRUE(started.ok()) << started.status();
        watch = *std::move(started);
      });
  ExpectSurvived(job);
  EXPECT_EQ(job.final_status.rollbacks(), 0);
  // The new coordinator resumed the job under its id from its newest
  // checkpoint.
  EXPECT_GT(job.final_status.resumed_from_step(), 0) << job.final_status.ShortDebugString();
  ASSERT_NE(watch, nullptr);
  absl::StatusOr<ExitStatus> watched = watch->Wait(absl::Seconds(30));
  const std::string watch_output = ReadFile(watch_log);
  ASSERT_TRUE(watched.ok()) << watched.status() << "\n" << watch_output;
  EXPECT_EQ(watched->exit_code, 0) << watch_output;
  EXPECT_THAT(watch_output, testing::HasSubstr("lost the coordinator"));
  EXPECT_THAT(watch_output, testing::HasSubstr("the coordinator is back: job " +
                                               job.final_status.job_id() + " is RUNNING"));
  EXPECT_THAT(watch_output, testing::HasSubstr("SUCCEEDED"));
}

TEST_F(ChaosTest, StreamsToAParameterServerCutThreeTimesLoseNothing) {
  std::mt19937 random(96);
  std::vector<int> cut;
  std::vector<Fault> faults;
  int64_t step = kCheckpointEverySteps;
  for (int i = 0; i < 3; ++i) {
    step += std::uniform_int_distribution<int64_t>(50, 300)(random);
    // The link holds every chunk for a moment before the reset, so that
    // calls are in flight when it comes: sent and not yet answered. (Cut
    // at once, the streams could be idle between two steps on a busy
    // machine, and nothing would be retried.)
    faults.push_back({"hold the streams to ps/1 for 300ms, then reset every connection", step,
                      [&cut](TestCluster&, const std::string&) {
                        proxy_->SetDelay(absl::Seconds(1));
                        absl::SleepFor(absl::Milliseconds(300));
                        cut.push_back(proxy_->ResetConnections());
                        proxy_->SetDelay(absl::ZeroDuration());
                        return absl::OkStatus();
                      }});
  }
  const int retried_before = Occurrences(WorkerLogs(), "succeeded after");
  const JobRecord job = Run("streams_cut", faults);
  ExpectSurvived(job);
  // The shard itself was never lost.
  EXPECT_EQ(job.final_status.rollbacks(), 0);
  ASSERT_EQ(cut.size(), 3u);
  for (int connections : cut) EXPECT_GT(connections, 0) << "nothing to cut: the fault did nothing";
  // Calls in flight failed and were sent again (a push with its sequence
  // number, so the shard applies it once).
  const int retried = Occurrences(WorkerLogs(), "succeeded after") - retried_before;
  EXPECT_GT(retried, 0) << "no call to ps/1 was in flight when its streams were cut";
  std::printf("streams_cut: connections reset: %d, %d, %d; calls retried: %d\n", cut[0], cut[1],
              cut[2], retried);
}

TEST_F(ChaosTest, AParameterServerBehindASlowLinkSlowsTrainingAndLosesNothing) {
  std::mt19937 random(97);
  int64_t delayed_before = proxy_->delayed_chunks();
  const JobRecord job = Run("link_slow", {{"hold every chunk to and from ps/1 for 200ms, for 6s",
                                           SomeStep(random), [](TestCluster&, const std::string&) {
                                             proxy_->SetDelay(absl::Milliseconds(200));
                                             absl::SleepFor(absl::Seconds(6));
                                             proxy_->SetDelay(absl::ZeroDuration());
                                             return absl::OkStatus();
                                           }}});
  ExpectSurvived(job);
  EXPECT_EQ(job.final_status.rollbacks(), 0);
  const int64_t delayed = proxy_->delayed_chunks() - delayed_before;
  EXPECT_GT(delayed, 10) << "hardly anything went through the slow link";
  std::printf("link_slow: %lld chunks held back\n", static_cast<long long>(delayed));
}

TEST_F(ChaosTest, SeveralFaultsInARow) {
  std::mt19937 random(95);
  std::vector<Fault> faults = {KillFault("ps/0", 0), KillFault("worker/0", 0),
                               KillFault("evaluator/0", 0), KillFault("ps/1", 0)};
  std::shuffle(faults.begin(), faults.end(), random);
  // Last: the new coordinator must know of the rollbacks before it. So it
  // dies once both are done: the job notices a restarted shard when the
  // shard registers again, and the workers train on meanwhile, so on a
  // busy machine the step can pass the coordinator's turn first. (Killed
  // in the middle of a rollback, the new coordinator resumes from the
  // newest checkpoint as the rollback would have, without counting one.)
  Fault kill_coordinator = KillFault("coordinator/0", 0);
  kill_coordinator.act = [kill = kill_coordinator.act](TestCluster& cluster,
                                                       const std::string& job_id) {
    const absl::StatusOr<JobStatus> rolled_back = cluster.AwaitStatus(
        job_id, [](const JobStatus& status) { return status.rollbacks() >= 2; }, absl::Minutes(1));
    if (!rolled_back.ok()) return rolled_back.status();
    return kill(cluster, job_id);
  };
  faults.push_back(std::move(kill_coordinator));
  int64_t step = kCheckpointEverySteps + 20;
  for (Fault& fault : faults) {
    step += std::uniform_int_distribution<int64_t>(60, 200)(random);
    fault.at_step = step;
  }
  const JobRecord job = Run("several", faults);
  ExpectSurvived(job);
  EXPECT_EQ(job.final_status.rollbacks(), 2);
}

}  // namespace
}  // namespace pstrain
