// A local cluster of real processes scaled while it is supervised, through
// the files `pstrain scale` writes and `pstrain local` reads: from 2
// workers to 3 and back to 1, a worker that ignores SIGTERM killed after
// the grace and not restarted, and the requests the cluster refuses.

#include "client/worker_scaler.h"

#include <signal.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "client/local_cluster.h"
#include "client/restart_policy.h"
#include "client/scale_inbox.h"
#include "client/task_supervisor.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "common/random/random_source.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

// How long `pstrain scale` waits for an answer in these tests; each comes
// within seconds.
constexpr absl::Duration kAnswerDeadline = absl::Seconds(90);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

bool ProcessIsGone(int pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// The pid in "worker/2 (pid 1234) left: ..." or "... started (pid 1234) ...".
int PidIn(const std::string& line) {
  const size_t start = line.find("(pid ");
  int pid = 0;
  if (start == std::string::npos) return 0;
  const std::string digits = line.substr(start + 5, line.find(')', start) - start - 5);
  return absl::SimpleAtoi(digits, &pid) ? pid : 0;
}

// A local cluster of 1 parameter server and 2 workers, supervised as
// `pstrain local` does while a job runs (restart on failure), taking scale
// requests from its run folder.
class WorkerScalerTest : public testing::Test {
 protected:
  void SetUp() override {
    // Its own folder for the pointers `pstrain scale` finds clusters by.
    ::setenv("TMPDIR", testing::TempDir().c_str(), 1);
    LocalClusterOptions options;
    options.num_ps = 1;
    options.num_workers = 2;
    options.evaluator = false;
    options.run_dir =
        testing::TempDir() + "/" + testing::UnitTest::GetInstance()->current_test_info()->name();
    run_dir_ = options.run_dir;
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    absl::StatusOr<std::unique_ptr<ScaleInbox>> inbox = ScaleInbox::Open(run_dir_);
    ASSERT_TRUE(inbox.ok()) << inbox.status();
    inbox_ = *std::move(inbox);
    policy_ = std::make_unique<RestartPolicy>(RestartPolicyOptions(), clock_, random_);
    supervisor_ = std::thread([this] {
      given_up_ = SuperviseTasks(
          *cluster_, *policy_, clock_, stop_,
          [this](const std::string& line) {
            absl::MutexLock lock(&mu_);
            announced_.push_back(line);
          },
          inbox_.get());
    });
  }

  void TearDown() override { StopSupervising(); }

  // Asks for `workers` as `pstrain scale --workers=N` does.
  absl::StatusOr<ScaleAnswer> Scale(int workers, absl::Duration grace = absl::Seconds(30)) {
    absl::StatusOr<std::string> run_dir = FindRunningLocalCluster();
    EXPECT_TRUE(run_dir.ok()) << run_dir.status();
    if (!run_dir.ok()) return run_dir.status();
    EXPECT_EQ(*run_dir, run_dir_);
    ScaleRequest request;
    request.workers = workers;
    request.grace = grace;
    return SendScaleRequest(*run_dir, request, kAnswerDeadline);
  }

  // Ends the supervision, after which the test may read the cluster.
  void StopSupervising() {
    if (!supervisor_.joinable()) return;
    stop_.Stop();
    supervisor_.join();
  }

  std::string Announced() {
    absl::MutexLock lock(&mu_);
    return absl::StrJoin(announced_, "\n");
  }

  std::vector<std::string> TaskNames() const {
    std::vector<std::string> names;
    for (const LocalTask& task : cluster_->tasks()) names.push_back(task.name());
    return names;
  }

  std::string run_dir_;
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<ScaleInbox> inbox_;
  RealClock clock_;
  SeededRandom random_{7};
  std::unique_ptr<RestartPolicy> policy_;
  StopSignal stop_;
  std::thread supervisor_;
  std::optional<GivenUpTask> given_up_;
  absl::Mutex mu_;
  std::vector<std::string> announced_ ABSL_GUARDED_BY(mu_);
};

TEST_F(WorkerScalerTest, FromTwoWorkersToThreeAndBackToOne) {
  absl::StatusOr<ScaleAnswer> up = Scale(3);
  ASSERT_TRUE(up.ok()) << up.status();
  ASSERT_TRUE(up->result.ok()) << up->result;
  EXPECT_EQ(up->workers, 3);
  ASSERT_EQ(up->changes.size(), 1u);
  const std::string joined = up->changes[0];
  EXPECT_TRUE(absl::StartsWith(joined, "worker/2 joined: started (pid ")) << joined;
  EXPECT_TRUE(absl::EndsWith(joined, "; log " + run_dir_ + "/worker-2.log")) << joined;
  const int added = PidIn(joined);
  ASSERT_GT(added, 0) << joined;
  EXPECT_FALSE(ProcessIsGone(added));
  // It serves as worker 2 and registered with the coordinator.
  const std::string log = ReadFile(run_dir_ + "/worker-2.log");
  EXPECT_NE(log.find("pstrain worker 2 serving gRPC on 127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find("registered worker/2 incarnation"), std::string::npos) << log;
  // Prometheus finds it.
  EXPECT_NE(ReadFile(run_dir_ + "/prometheus_targets.json")
                .find(R"("labels": {"task_index": "2", "task_type": "worker"})"),
            std::string::npos)
      << ReadFile(run_dir_ + "/prometheus_targets.json");

  absl::StatusOr<ScaleAnswer> down = Scale(1);
  ASSERT_TRUE(down.ok()) << down.status();
  ASSERT_TRUE(down->result.ok()) << down->result;
  EXPECT_EQ(down->workers, 1);
  ASSERT_EQ(down->changes.size(), 2u);
  // The highest index first, as a StatefulSet scales down; each exits 0 on
  // SIGTERM, well within the grace.
  for (int i = 0; i < 2; ++i) {
    const std::string& left = down->changes[i];
    const std::string worker = absl::StrCat("worker/", 2 - i);
    EXPECT_TRUE(absl::StartsWith(left, worker + " (pid ")) << left;
    EXPECT_NE(left.find(") left: SIGTERM, exit code 0 after "), std::string::npos) << left;
    EXPECT_EQ(left.find("SIGKILL"), std::string::npos) << left;
    EXPECT_TRUE(ProcessIsGone(PidIn(left))) << left;
    const std::string log = ReadFile(absl::StrCat(run_dir_, "/worker-", 2 - i, ".log"));
    EXPECT_NE(log.find(absl::StrCat("---- ", worker, " (pid ", PidIn(left),
                                    ") removed from the cluster; it exited with exit code 0")),
              std::string::npos)
        << log;
  }
  EXPECT_EQ(PidIn(down->changes[0]), added);

  // Asking again for what there is changes nothing; its answer also means
  // the supervisor has looked at its processes since the removals.
  absl::StatusOr<ScaleAnswer> same = Scale(1);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->result.ok()) << same->result;
  EXPECT_TRUE(same->changes.empty());
  StopSupervising();
  EXPECT_FALSE(given_up_.has_value());
  EXPECT_EQ(TaskNames(), (std::vector<std::string>{"coordinator/0", "ps/0", "worker/0"}));
  const std::string announced = Announced();
  EXPECT_EQ(announced.find("restart"), std::string::npos) << announced;
  EXPECT_NE(announced.find("pstrain scale (pid " + std::to_string(::getpid()) +
                           ") asks for 3 worker(s); 2 run now"),
            std::string::npos)
      << announced;
  EXPECT_NE(announced.find(joined), std::string::npos) << announced;
  EXPECT_NE(announced.find("1 worker(s) now"), std::string::npos) << announced;
  const std::string targets = ReadFile(run_dir_ + "/prometheus_targets.json");
  EXPECT_EQ(targets.find(R"("task_index": "1", "task_type": "worker")"), std::string::npos)
      << targets;
  EXPECT_TRUE(cluster_->CheckHealthy().ok());
  EXPECT_TRUE(cluster_->Stop(absl::Seconds(20)).ok());
}

TEST_F(WorkerScalerTest, AWorkerThatOutlivesTheGraceIsKilledAndNotRestarted) {
  // worker/1 frozen: SIGTERM waits, SIGKILL does not.
  const LocalTask frozen = cluster_->tasks().back();
  ASSERT_EQ(frozen.name(), "worker/1");
  ASSERT_EQ(::kill(frozen.pid, SIGSTOP), 0);
  absl::StatusOr<ScaleAnswer> down = Scale(1, absl::Milliseconds(500));
  ASSERT_TRUE(down.ok()) << down.status();
  ASSERT_TRUE(down->result.ok()) << down->result;
  ASSERT_EQ(down->changes.size(), 1u);
  const std::string& left = down->changes[0];
  EXPECT_TRUE(absl::StartsWith(
      left, absl::StrCat("worker/1 (pid ", frozen.pid,
                         ") left: SIGTERM, still running after the 0.5 s grace; SIGKILL, "
                         "killed by signal 9 (Killed) after ")))
      << left;
  EXPECT_TRUE(absl::EndsWith(left, " s; log " + run_dir_ + "/worker-1.log")) << left;
  EXPECT_TRUE(ProcessIsGone(frozen.pid));

  // Killed by a signal, a failure the restart policy would restart: it is
  // not, since it left on purpose. Added again, it takes index 1 and keeps
  // the log of the worker/1 that left.
  absl::StatusOr<ScaleAnswer> up = Scale(2);
  ASSERT_TRUE(up.ok()) << up.status();
  ASSERT_TRUE(up->result.ok()) << up->result;
  ASSERT_EQ(up->changes.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(up->changes[0], "worker/1 joined: started (pid ")) << up->changes[0];
  const std::string log = ReadFile(run_dir_ + "/worker-1.log");
  const size_t removed = log.find(absl::StrCat("---- worker/1 (pid ", frozen.pid,
                                               ") removed from the cluster; it exited "
                                               "with killed by signal 9 (Killed) ----"));
  const size_t added_again = log.find("---- worker/1 added again at ");
  ASSERT_NE(removed, std::string::npos) << log;
  ASSERT_NE(added_again, std::string::npos) << log;
  EXPECT_LT(removed, added_again);
  StopSupervising();
  EXPECT_FALSE(given_up_.has_value());
  const std::string announced = Announced();
  EXPECT_EQ(announced.find("restart"), std::string::npos) << announced;
  EXPECT_EQ(cluster_->num_workers(), 2);
  EXPECT_TRUE(cluster_->CheckHealthy().ok());
}

TEST_F(WorkerScalerTest, RequestsTheClusterCannotCarryOutAreRefusedWithWhy) {
  // A request file no `pstrain scale` would write: the cluster checks too.
  absl::StatusOr<ScaleAnswer> none = Scale(0);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->result.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(none->result.message(),
            "scale request: a cluster needs at least 1 worker, asked for 0");
  EXPECT_EQ(none->workers, 2);
  absl::StatusOr<ScaleAnswer> many = Scale(kMaxLocalWorkers + 1);
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_EQ(many->result.message(),
            "scale request: at most 64 workers on one machine, asked for 65");
  EXPECT_TRUE(many->changes.empty());

  StopSupervising();
  EXPECT_EQ(cluster_->num_workers(), 2);
  ASSERT_TRUE(cluster_->RemoveWorker(absl::Seconds(30)).ok());
  absl::StatusOr<RemovedWorker> last = cluster_->RemoveWorker(absl::Seconds(30));
  EXPECT_EQ(last.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(last.status().message(), "cannot remove the last worker: a job needs one");
  EXPECT_EQ(TaskNames(), (std::vector<std::string>{"coordinator/0", "ps/0", "worker/0"}));
}

}  // namespace
}  // namespace pstrain
