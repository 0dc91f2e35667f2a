// A job whose checkpoints fail, as on a full disk, through the Coordinator's
// own calls (the in-process coordinator, not its gRPC services): each failure is an event the user
// sees (in the watch, the job's status and the metrics), the schedule tries again one interval
// later, a saved checkpoint starts the count again, and the N-th failure
// in a row fails the job with STOP_REASON_CHECKPOINT_FAILURES while the
// last good checkpoint stays intact and is what a resume restores. The
// parameter servers are in-memory fakes writing through a TestEnv that
// fails their writes on demand; time is a FakeClock.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_pointer.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_env.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/task_name.h"
#include "server/coordinator/testing/in_process_coordinator.h"
#include "server/coordinator/testing/source_reader.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

// Steps 100, 200, ... are due; the third failure in a row fails the job.
constexpr char kJob[] = R"pb(
  name: "full"
  mode: JOB_MODE_TRAIN
  model { logistic_regression {} }
  train_data { synthetic_clicks { num_examples: 4096 } }
  checkpoint { model_dir: "m" every_steps: 100 max_consecutive_failures: 3 }
  stop { max_steps: 100000 }
)pb";

class CheckpointFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = JoinPath(::testing::TempDir(), "checkpoint_failure");
    RemoveTree(posix_, root_).IgnoreError();
    ASSERT_TRUE(CreateDirs(posix_, root_).ok());
    CoordinatorOptions options;
    options.checkpoint_root = root_;
    options.runner.num_ps = 2;
    options.runner.num_workers = 1;
    options.membership.heartbeat_timeout = absl::Hours(10);
    InProcessCoordinator::Fakes fakes;
    fakes.num_records = 4096;
    fakes.env = &env_;
    coordinator_ = std::make_unique<InProcessCoordinator>(options, std::move(fakes));
    ASSERT_TRUE(coordinator_->RegisterShards().ok());
    RegisterRequest worker;
    *worker.mutable_task() = worker_;
    worker.set_incarnation(1);
    ASSERT_TRUE(coordinator().Register(worker).ok());
  }

  Coordinator& coordinator() { return coordinator_->coordinator(); }

  // Submits kJob and watches it until its worker has its assignment.
  void StartJob() {
    SubmitJobRequest submit;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kJob, submit.mutable_spec()));
    absl::StatusOr<SubmitJobResponse> submitted = coordinator().SubmitJob(submit);
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    job_id_ = submitted->job_id();
    WatchJobRequest watch;
    watch.set_job_id(job_id_);
    absl::StatusOr<std::shared_ptr<StreamSource<JobEvent>>> source = coordinator().WatchJob(watch);
    ASSERT_TRUE(source.ok()) << source.status();
    events_ = std::make_unique<SourceReader<JobEvent>>(*std::move(source));
    absl::StatusOr<Assignment> assignment =
        coordinator_->AwaitBoardAssignment(worker_, absl::Seconds(30));
    ASSERT_TRUE(assignment.ok()) << assignment.status();
    assignment_ = *std::move(assignment);
    ASSERT_EQ(assignment_.job_id(), job_id_);
  }

  // The worker reports `updates` more applied updates.
  void Train(int64_t updates) {
    ProgressReport report;
    *report.mutable_task() = worker_;
    report.set_incarnation(1);
    report.set_job_id(job_id_);
    report.set_steps(updates);
    applied_ += updates;
    report.set_parameter_version(applied_);
    report.set_loss(0.5);
    absl::StatusOr<ProgressResponse> response = coordinator().ReportProgress(report);
    ASSERT_TRUE(response.ok()) << response.status();
  }

  // The job's next event about a checkpoint, saved or failed.
  std::optional<JobEvent> NextCheckpointEvent() {
    while (std::optional<JobEvent> event = events_->Next()) {
      if (event->has_checkpoint() || event->has_checkpoint_failure()) return event;
    }
    return std::nullopt;
  }

  void ExpectSaved(int64_t step) {
    std::optional<JobEvent> event = NextCheckpointEvent();
    ASSERT_TRUE(event.has_value() && event->has_checkpoint()) << "no ckpt-" << step;
    EXPECT_EQ(event->checkpoint().step(), step);
  }

  CheckpointFailure ExpectFailed(int64_t step) {
    std::optional<JobEvent> event = NextCheckpointEvent();
    if (!event.has_value() || !event->has_checkpoint_failure()) {
      ADD_FAILURE() << "no failure of ckpt-" << step << "; got "
                    << (event.has_value() ? event->DebugString() : "nothing");
      return CheckpointFailure();
    }
    EXPECT_EQ(event->checkpoint_failure().step(), step);
    return event->checkpoint_failure();
  }

  JobStatus AwaitEnd() {
    JobStatus last;
    while (std::optional<JobEvent> event = events_->Next()) {
      if (event->has_status()) last = event->status();
      if (last.state() == JOB_STATE_FAILED || last.state() == JOB_STATE_SUCCEEDED) break;
    }
    return last;
  }

  // The shards' writes fail as on a full disk, until DiskFreed.
  void DiskFull() {
    for (int i = 0; i < 2; ++i) {
      env_.FailOn(EnvOp::kAppend, ShardFileName(i, 2),
                  absl::ResourceExhaustedError("write failed: No space left on device"));
    }
  }
  void DiskFreed() { env_.ClearFailures(); }

  double FailedCheckpointsCounted() {
    for (const prometheus::MetricFamily& family : coordinator_->registry().Collect()) {
      if (family.name != "pstrain_coordinator_checkpoints_total") continue;
      for (const prometheus::ClientMetric& metric : family.metric) {
        for (const prometheus::ClientMetric::Label& label : metric.label) {
          if (label.value == "failed") return metric.counter.value;
        }
      }
    }
    return -1;
  }

  std::string root_;
  PosixEnv posix_;
  TestEnv env_{&posix_};
  const TaskId worker_ = MakeTask(TASK_TYPE_WORKER, 0);
  std::unique_ptr<InProcessCoordinator> coordinator_;
  std::string job_id_;
  std::unique_ptr<SourceReader<JobEvent>> events_;
  Assignment assignment_;
  int64_t applied_ = 0;  // updates the shards applied
};

TEST_F(CheckpointFailureTest, FailuresAreSeenRetriedAndFailTheJobWhileTheLastGoodOneStays) {
  ASSERT_NO_FATAL_FAILURE(StartJob());
  Train(100);
  ExpectSaved(100);

  DiskFull();
  Train(100);
  const CheckpointFailure first = ExpectFailed(200);
  EXPECT_THAT(first.message(), HasSubstr("No space left on device"));
  EXPECT_EQ(first.consecutive_failures(), 1);
  EXPECT_EQ(first.max_consecutive_failures(), 3);
  EXPECT_EQ(FailedCheckpointsCounted(), 1);
  absl::StatusOr<JobStatus> status = coordinator().GetJob(job_id_);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), JOB_STATE_RUNNING);
  EXPECT_EQ(status->checkpoint_failures(), 1);
  EXPECT_THAT(status->last_checkpoint_failure(), HasSubstr("ckpt-200 (1 in a row of at most 3): "));
  // Tried again one interval later: not at the next report, nor never.
  Train(50);
  Train(50);
  EXPECT_EQ(ExpectFailed(300).consecutive_failures(), 2);

  // Space came back: saved, and the count starts again.
  DiskFreed();
  Train(100);
  ExpectSaved(400);
  DiskFull();
  for (int64_t step : {500, 600, 700}) {
    Train(100);
    EXPECT_EQ(ExpectFailed(step).consecutive_failures(), (step - 400) / 100);
  }

  const JobStatus ended = AwaitEnd();
  EXPECT_EQ(ended.state(), JOB_STATE_FAILED);
  EXPECT_EQ(ended.stop_reason(), STOP_REASON_CHECKPOINT_FAILURES);
  EXPECT_THAT(ended.reason(), HasSubstr("3 checkpoints failed in a row "
                                        "(checkpoint.max_consecutive_failures 3), the last, "
                                        "ckpt-700: "));
  EXPECT_THAT(ended.reason(), HasSubstr("No space left on device"));
  EXPECT_THAT(ended.reason(), HasSubstr("resume from ckpt-400"));
  EXPECT_EQ(ended.checkpoint_failures(), 5);
  EXPECT_EQ(FailedCheckpointsCounted(), 5);

  // Nothing of a failed checkpoint is left; the good ones verify.
  DiskFreed();
  const std::string model_dir = JoinPath(root_, "m");
  absl::StatusOr<std::vector<std::string>> entries = posix_.ListDir(model_dir);
  ASSERT_TRUE(entries.ok()) << entries.status();
  std::vector<std::string> checkpoints;  // also unfinished ones, ckpt-<step>.tmp
  for (const std::string& entry : *entries) {
    if (absl::StartsWith(entry, "ckpt-")) checkpoints.push_back(entry);
  }
  EXPECT_THAT(checkpoints, UnorderedElementsAre("ckpt-100", "ckpt-400"));
  EXPECT_EQ(ReadCheckpointPointer(posix_, model_dir).value_or(-1), 400);
  absl::StatusOr<CheckpointManifest> last_good =
      VerifyCheckpoint(posix_, JoinPath(model_dir, "ckpt-400"));
  ASSERT_TRUE(last_good.ok()) << last_good.status();
  EXPECT_EQ(last_good->global_step(), 400);

  // The same job submitted again resumes from it.
  ASSERT_NO_FATAL_FAILURE(StartJob());
  EXPECT_EQ(assignment_.restore_checkpoint(), JoinPath(model_dir, "ckpt-400"));
  EXPECT_EQ(assignment_.global_step(), 400);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
