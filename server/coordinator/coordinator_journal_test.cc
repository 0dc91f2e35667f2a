// The coordinator with a job journal: what a coordinator that stops (as on
// SIGTERM) leaves for the next one on the same state folder, what a
// shutdown ends, and ids that are never given twice. No member registers,
// so a started job waits for its members until the coordinator stops; the
// end-to-end case with real processes and a kill -9 is
// tests/coordinator_restart_test.cc.

#include <memory>
#include <optional>
#include <string>

#include "common/checkpoint/env.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/whole_file.h"
#include "common/clock/fake_clock.h"
#include "common/summary/scalar_jsonl.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/testing/fake_planner.h"
#include "server/coordinator/testing/fake_shard.h"
#include "server/coordinator/testing/source_reader.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::HasSubstr;

constexpr char kTrain[] = R"pb(
  name: "t"
  mode: JOB_MODE_TRAIN
  model { logistic_regression {} }
  train_data { synthetic_clicks { num_examples: 4096 } }
  stop { max_steps: 1000 }
  checkpoint { model_dir: "m" }
)pb";

class CoordinatorJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = JoinPath(::testing::TempDir(),
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    RemoveTree(env_, root_).IgnoreError();
    ASSERT_TRUE(CreateDirs(env_, root_).ok());
    options_.checkpoint_root = root_;
    options_.state_dir = root_ + "/.coordinator";
    options_.runner.num_ps = 1;
    options_.runner.num_workers = 1;
  }

  // A coordinator process: a new one on the same state folder each time.
  std::unique_ptr<Coordinator> StartCoordinator() {
    absl::StatusOr<std::unique_ptr<Coordinator>> coordinator =
        Coordinator::Create(clock_, env_, planner_, FakeShardClients({}), nullptr, options_);
    EXPECT_TRUE(coordinator.ok()) << coordinator.status();
    if (!coordinator.ok()) return nullptr;
    (*coordinator)->Start();
    return *std::move(coordinator);
  }

  std::string Submit(Coordinator& coordinator) {
    SubmitJobRequest request;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(kTrain, request.mutable_spec()));
    absl::StatusOr<SubmitJobResponse> response = coordinator.SubmitJob(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->job_id() : "";
  }

  JobState StateOf(Coordinator& coordinator, const std::string& job_id) {
    absl::StatusOr<JobStatus> status = coordinator.GetJob(job_id);
    EXPECT_TRUE(status.ok()) << status.status();
    return status.ok() ? status->state() : JOB_STATE_UNSPECIFIED;
  }

  // Registers worker/`index` and sends a heartbeat saying it works on
  // `job_id`; the job the answer names.
  std::string Beat(Coordinator& coordinator, int index, const std::string& job_id) {
    RegisterRequest join;
    join.mutable_task()->set_type(TASK_TYPE_WORKER);
    join.mutable_task()->set_index(index);
    join.set_incarnation(7);
    EXPECT_TRUE(coordinator.Register(join).ok());
    HeartbeatRequest beat;
    *beat.mutable_task() = join.task();
    beat.set_incarnation(7);
    beat.set_job_id(job_id);
    absl::StatusOr<HeartbeatResponse> response = coordinator.Heartbeat(beat);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->job_id() : "(failed)";
  }

  // Waits (real time, on the job's events) until the running job is
  // `job_id`.
  void AwaitRunning(Coordinator& coordinator, const std::string& job_id) {
    WatchJobRequest request;
    request.set_job_id(job_id);
    absl::StatusOr<std::shared_ptr<StreamSource<JobEvent>>> source = coordinator.WatchJob(request);
    ASSERT_TRUE(source.ok()) << source.status();
    SourceReader<JobEvent> reader(*std::move(source));
    while (std::optional<JobEvent> event = reader.Next()) {
      if (event->status().state() == JOB_STATE_RUNNING) {
        EXPECT_EQ(coordinator.GetCluster().running_job_id(), job_id);
        return;
      }
    }
    ADD_FAILURE() << job_id << " never started";
  }

  std::string root_;
  PosixEnv env_;
  FakeClock clock_;
  FakePlanner planner_{4096};
  CoordinatorOptions options_;
};

TEST_F(CoordinatorJournalTest, AStoppedCoordinatorLeavesTheRunningJobAndTheQueueToTheNextOne) {
  std::string running, queued;
  {
    std::unique_ptr<Coordinator> first = StartCoordinator();
    ASSERT_NE(first, nullptr);
    running = Submit(*first);
    queued = Submit(*first);
    AwaitRunning(*first, running);
    RegisterRequest evaluator;
    evaluator.mutable_task()->set_type(TASK_TYPE_EVALUATOR);
    evaluator.set_incarnation(3);
    ASSERT_TRUE(first->Register(evaluator).ok());
    WatchCheckpointsRequest watch;
    *watch.mutable_task() = evaluator.task();
    watch.set_incarnation(3);
    watch.set_job_id(running);
    absl::StatusOr<std::shared_ptr<StreamSource<CheckpointNotification>>> checkpoints =
        first->WatchCheckpoints(watch);
    ASSERT_TRUE(checkpoints.ok()) << checkpoints.status();
    first->Stop();  // SIGTERM
    // The evaluator's stream breaks rather than ends: it watches again.
    StreamSource<CheckpointNotification>::Next next = (*checkpoints)->Poll([] {});
    ASSERT_TRUE(next.end.has_value());
    EXPECT_EQ(next.end->code(), absl::StatusCode::kUnavailable) << *next.end;
    (*checkpoints)->Close();
    // Until the process is gone, members on the job do not hear that it
    // ended (they would leave it): calls for it are to be tried again.
    EXPECT_EQ(Beat(*first, 0, running), running);
    ProgressReport report;
    report.mutable_task()->set_type(TASK_TYPE_WORKER);
    report.set_incarnation(7);
    report.set_job_id(running);
    EXPECT_EQ(first->ReportProgress(report).status().code(), absl::StatusCode::kUnavailable);
  }
  std::unique_ptr<Coordinator> second = StartCoordinator();
  ASSERT_NE(second, nullptr);
  // The same ids; the job that ran starts again first.
  AwaitRunning(*second, running);
  absl::StatusOr<JobStatus> resumed = second->GetJob(running);
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(resumed->state(), JOB_STATE_RUNNING);
  EXPECT_EQ(resumed->spec().checkpoint().model_dir(), root_ + "/m");
  EXPECT_EQ(StateOf(*second, queued), JOB_STATE_QUEUED);
  const std::string next = Submit(*second);
  EXPECT_EQ(next, "t-3");  // after t-1 and t-2, never one of theirs

  // A worker that still trains the job hears that it goes on while it
  // starts again; one on no job hears of none.
  EXPECT_EQ(Beat(*second, 0, running), running);
  EXPECT_EQ(Beat(*second, 1, ""), "");
  EXPECT_EQ(Beat(*second, 2, queued), "");
}

TEST_F(CoordinatorJournalTest, WithoutResumeAfterStopTheRunningJobEndsFailedForGood) {
  options_.resume_running_job_after_stop = false;
  std::string running;
  {
    std::unique_ptr<Coordinator> first = StartCoordinator();
    ASSERT_NE(first, nullptr);
    running = Submit(*first);
    AwaitRunning(*first, running);
    first->Stop();
  }
  std::unique_ptr<Coordinator> second = StartCoordinator();
  ASSERT_NE(second, nullptr);
  absl::StatusOr<JobStatus> ended = second->GetJob(running);
  ASSERT_TRUE(ended.ok()) << ended.status();  // its final status is kept
  EXPECT_EQ(ended->state(), JOB_STATE_FAILED);
  EXPECT_THAT(ended->reason(), HasSubstr("coordinator shut down"));
  EXPECT_EQ(second->GetCluster().running_job_id(), "");
}

TEST_F(CoordinatorJournalTest, AShutdownEndsTheQueueForTheNextCoordinatorToo) {
  std::string running, queued;
  {
    std::unique_ptr<Coordinator> first = StartCoordinator();
    ASSERT_NE(first, nullptr);
    running = Submit(*first);
    queued = Submit(*first);
    AwaitRunning(*first, running);
    ShutdownRequest shutdown;
    shutdown.set_stop_running_job(true);
    ASSERT_TRUE(first->Shutdown(shutdown).ok());
    EXPECT_EQ(StateOf(*first, queued), JOB_STATE_STOPPED);
    first->Stop();
  }
  std::unique_ptr<Coordinator> second = StartCoordinator();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(StateOf(*second, queued), JOB_STATE_STOPPED);
  EXPECT_EQ(second->GetCluster().queued_jobs(), 0);
}

TEST_F(CoordinatorJournalTest, TheNextCoordinatorReadsTheCurvesOfEarlierJobsFromTheirSummaries) {
  std::string ended, resumed;
  {
    std::unique_ptr<Coordinator> first = StartCoordinator();
    ASSERT_NE(first, nullptr);
    ended = Submit(*first);
    AwaitRunning(*first, ended);
    StopJobRequest stop;
    stop.set_job_id(ended);
    stop.set_immediately(true);
    ASSERT_TRUE(first->StopJob(stop).ok());
    resumed = Submit(*first);
    AwaitRunning(*first, resumed);
    first->Stop();  // SIGTERM: `resumed` is left to the next one
  }
  // What the runs' summaries wrote (both jobs share model_dir "m").
  ASSERT_TRUE(CreateDirs(env_, root_ + "/m/train").ok());
  ASSERT_TRUE(WriteTestFile(env_, root_ + "/m/train/scalars.jsonl",
                            FormatScalarJsonLine({100, 10.0, "loss", 0.75}) +
                                FormatScalarJsonLine({200, 11.0, "loss", 0.5}))
                  .ok());
  std::unique_ptr<Coordinator> second = StartCoordinator();
  ASSERT_NE(second, nullptr);
  for (const std::string& job : {ended, resumed}) {
    absl::StatusOr<JobHistory::Read> read = second->JobEvents(job, 0);
    ASSERT_TRUE(read.ok()) << read.status();
    std::vector<int64_t> steps;
    bool status = false;
    for (const JobEvent& event : read->events) {
      if (event.has_progress()) steps.push_back(event.progress().global_step());
      status = status || event.has_status();
    }
    EXPECT_EQ(steps, (std::vector<int64_t>{100, 200})) << job;
    EXPECT_TRUE(status) << job;
  }
  EXPECT_EQ(second->JobEvents("t-99", 0).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CoordinatorJournalTest, ADamagedRecordIsSetAsideAndTheCoordinatorStarts) {
  std::string kept;
  {
    std::unique_ptr<Coordinator> first = StartCoordinator();
    ASSERT_NE(first, nullptr);
    Submit(*first);
    kept = Submit(*first);
    first->Stop();
  }
  const std::string damaged = options_.state_dir + "/job-1.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(env_, damaged, "# crc32c 00000000\nnot a job").ok());
  std::unique_ptr<Coordinator> second = StartCoordinator();
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(PathExists(env_, damaged + ".damaged").value_or(false));
  EXPECT_EQ(second->GetJob("t-1").status().code(), absl::StatusCode::kNotFound);
  AwaitRunning(*second, kept);
  EXPECT_EQ(Submit(*second), "t-3");
}

TEST_F(CoordinatorJournalTest, AStateFolderThatCannotBeCreatedStopsTheStart) {
  ASSERT_TRUE(WriteFileAtomically(env_, root_ + "/file", "x").ok());
  options_.state_dir = root_ + "/file/state";
  absl::StatusOr<std::unique_ptr<Coordinator>> coordinator =
      Coordinator::Create(clock_, env_, planner_, FakeShardClients({}), nullptr, options_);
  EXPECT_EQ(coordinator.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(coordinator.status().message(), HasSubstr(root_ + "/file/state"));
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
