// A one-shot cluster (pstrain-coordinator --job FILE), as a Kubernetes Job
// or a Kubeflow TFJob runs one: real processes on loopback run the one job
// the coordinator was given, and every process exits once it ends, with
// the job's outcome as its exit code (common/daemon/exit_codes.h). A
// coordinator started again with the same file resumes the job, or exits
// at once with the outcome of one that ended.

#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/local_cluster.h"
#include "common/daemon/exit_codes.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "protos/coordinator.grpc.pb.h"
#include "tests/clicks_job.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr char kCoordinator[] = "coordinator/0";
// A job of a few seconds, its final evaluation and the shutdown notice
// (5 s) fit well within it.
constexpr absl::Duration kEndTimeout = absl::Minutes(3);

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

class OneShotTest : public ::testing::Test {
 protected:
  std::string Folder() const {
    return absl::StrCat(::testing::TempDir(), "/",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  // Starts a cluster of one shard and one worker whose coordinator runs the
  // job spec `spec_text`, written to a file.
  void StartOneShot(const std::string& spec_text) {
    const std::string folder = Folder();
    ::mkdir(folder.c_str(), 0755);
    const std::string spec_path = folder + "/job.pbtxt";
    WriteFile(spec_path, spec_text);
    LocalClusterOptions options;
    options.num_ps = 1;
    options.num_workers = 1;
    options.checkpoint_root = folder + "/root";
    const char* kept = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    options.run_dir =
        absl::StrCat(kept != nullptr ? kept : folder.c_str(), "/",
                     ::testing::UnitTest::GetInstance()->current_test_info()->name(), "-logs");
    options.coordinator_flags = {"--job=" + spec_path};
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    jobs_ = JobService::NewStub(grpc::CreateChannel(cluster_->coordinator().grpc_address,
                                                    grpc::InsecureChannelCredentials()));
  }

  // Waits for every process to end by itself; each one's exit code, by
  // task name.
  std::map<std::string, int> AwaitEnd() {
    std::map<std::string, int> codes;
    absl::StatusOr<std::vector<TaskExit>> ended = cluster_->AwaitEnd(kEndTimeout);
    EXPECT_TRUE(ended.ok()) << ended.status();
    for (const TaskExit& task : ended.value_or(std::vector<TaskExit>())) {
      std::cout << task.task.name() << ": " << task.exit.ToString() << std::endl;
      codes[task.task.name()] = task.exit.exit_code;
    }
    return codes;
  }

  // The one job the coordinator knows, while it runs.
  JobStatus TheJob() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ListJobsResponse response;
    const grpc::Status status = jobs_->ListJobs(&context, ListJobsRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.jobs_size(), 1);
    return response.jobs_size() > 0 ? response.jobs(0) : JobStatus();
  }

  // Polls the job until it has saved a checkpoint past step 0.
  void AwaitCheckpoint() {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      if (TheJob().checkpoints_size() > 0) return;
      absl::SleepFor(absl::Milliseconds(100));
    }
    ADD_FAILURE() << "no checkpoint within 60 s";
  }

  std::string CoordinatorLog() const { return ReadAll(cluster_->coordinator().log_path); }

  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<JobService::Stub> jobs_;
};

TEST_F(OneShotTest, EveryProcessExitsZeroOnceTheJobSucceeded) {
  testing_jobs::ClicksJob job;
  job.max_steps = 300;
  ASSERT_NO_FATAL_FAILURE(StartOneShot(job.Text()));
  const std::map<std::string, int> codes = AwaitEnd();
  ASSERT_EQ(codes.size(), 4u);  // coordinator, ps, worker, evaluator
  for (const auto& [task, code] : codes) EXPECT_EQ(code, kDaemonExitOk) << task;
  const std::string log = CoordinatorLog();
  EXPECT_THAT(log, HasSubstr("one-shot: job clicks-1 SUCCEEDED: reached max_steps 300"));
  // The progress lines `kubectl logs` shows while a job trains.
  EXPECT_THAT(log, ::testing::ContainsRegex("job clicks-1: step [0-9]+, [0-9]+ examples/s, loss"));
  for (const LocalTask& task : cluster_->tasks()) {
    if (task.role != "worker") continue;
    EXPECT_THAT(ReadAll(task.log_path),
                ::testing::ContainsRegex("job clicks-1: global step [0-9]+; this worker [0-9]+ "
                                         "examples/s, loss"));
  }
  // The final checkpoint and the export were written before anyone exited.
  const std::string model_dir = Folder() + "/root/clicks";
  EXPECT_TRUE(std::ifstream(model_dir + "/ckpt-300/MANIFEST").good()) << model_dir;
  EXPECT_TRUE(std::ifstream(model_dir + "/export/best/300/MANIFEST").good()) << model_dir;
  // The journal lives beside the checkpoints, not in the shared root.
  EXPECT_TRUE(std::ifstream(model_dir + "/.coordinator/job-1.pbtxt").good());

  // Started again with the same file (a pod restarted after the end), the
  // coordinator trains nothing and exits with the recorded outcome.
  ASSERT_TRUE(cluster_->RestartTask(kCoordinator).ok());
  EXPECT_EQ(AwaitEnd()[kCoordinator], kDaemonExitOk);
  EXPECT_THAT(CoordinatorLog(), HasSubstr("one-shot: job clicks-1 already ended SUCCEEDED"));

  // The file edited for another run on the same model_dir: refused, and
  // nothing trains.
  job.max_steps = 600;
  ASSERT_NO_FATAL_FAILURE(WriteFile(Folder() + "/job.pbtxt", job.Text()));
  const absl::Status edited = cluster_->RestartTask(kCoordinator);
  EXPECT_FALSE(edited.ok());
  EXPECT_THAT(CoordinatorLog(),
              HasSubstr("its model_dir already holds a one-shot run of another spec"));
  EXPECT_FALSE(std::ifstream(model_dir + "/ckpt-600/MANIFEST").good());
}

TEST_F(OneShotTest, EveryProcessExitsThreeOnceTheJobFailed) {
  // Labels up to 7 for a model of 2 classes: accepted at submit, refused
  // when the job reads its data.
  const std::string data = Folder() + "/eight_classes.csv";
  ::mkdir(Folder().c_str(), 0755);
  WriteFile(data, "x,y\n0.5,0\n1.5,7\n2.5,1\n");
  const std::string spec = absl::StrCat(R"(
    name: "bad-labels"
    mode: JOB_MODE_TRAIN
    model { mlp { num_classes: 2 hidden_units: [4] } }
    train_data { csv { path: ")",
                                        data, R"(" label: "y" } batch_size: 2 }
    optimizer { adagrad {} learning_rate: 0.1 }
    stop { max_steps: 10 }
    checkpoint { model_dir: "bad-labels" }
  )");
  ASSERT_NO_FATAL_FAILURE(StartOneShot(spec));
  const std::map<std::string, int> codes = AwaitEnd();
  ASSERT_EQ(codes.size(), 4u);
  for (const auto& [task, code] : codes) EXPECT_EQ(code, kDaemonExitJobFailed) << task;
  EXPECT_THAT(CoordinatorLog(), HasSubstr("one-shot: job bad-labels-1 FAILED"));
  EXPECT_THAT(CoordinatorLog(), HasSubstr("8 classes"));
}

TEST_F(OneShotTest, ACoordinatorStoppedMidJobExitsForARestartThatResumesIt) {
  testing_jobs::ClicksJob job;
  job.num_examples = 200000;
  job.max_steps = 3000;
  job.checkpoint_every_steps = 100;
  ASSERT_NO_FATAL_FAILURE(StartOneShot(job.Text()));
  ASSERT_NO_FATAL_FAILURE(AwaitCheckpoint());
  // SIGTERM, as Kubernetes stops a pod: the job is not over, so the
  // coordinator asks to be started again (128 + 15).
  absl::StatusOr<ExitStatus> stopped = cluster_->KillTask(kCoordinator, SIGTERM, absl::Seconds(60));
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->exit_code, kDaemonExitSignalBase + SIGTERM);
  ASSERT_TRUE(cluster_->RestartTask(kCoordinator).ok());
  const std::map<std::string, int> codes = AwaitEnd();
  ASSERT_EQ(codes.size(), 4u);
  for (const auto& [task, code] : codes) EXPECT_EQ(code, kDaemonExitOk) << task;
  const std::string log = CoordinatorLog();
  EXPECT_THAT(log, HasSubstr("one-shot: job clicks-1 resumes"));
  EXPECT_THAT(log, HasSubstr("one-shot: job clicks-1 SUCCEEDED: reached max_steps 3000"));
}

TEST_F(OneShotTest, ARefusedSpecStopsTheCoordinatorWithExitCodeTwo) {
  testing_jobs::ClicksJob job;
  job.model_dir = "/elsewhere/clicks";  // outside the checkpoint root
  const std::string folder = Folder();
  ::mkdir(folder.c_str(), 0755);
  WriteFile(folder + "/job.pbtxt", job.Text());
  LocalClusterOptions options;
  options.num_ps = 1;
  options.num_workers = 1;
  options.checkpoint_root = folder + "/root";
  options.run_dir = folder + "/logs";
  options.coordinator_flags = {"--job=" + folder + "/job.pbtxt"};
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
  ASSERT_FALSE(cluster.ok());
  EXPECT_THAT(std::string(cluster.status().message()), HasSubstr("exit code 2"));
  EXPECT_THAT(std::string(cluster.status().message()),
              HasSubstr("checkpoint.model_dir '/elsewhere/clicks' is not under the "
                        "coordinator's checkpoint root"));
}

}  // namespace
}  // namespace pstrain
