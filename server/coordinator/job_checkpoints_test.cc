#include "server/coordinator/job_checkpoints.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_env.h"
#include "common/clock/fake_clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "server/coordinator/testing/fake_shard.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Checkpoints every 100 steps, two kept; the second failure in a row is too
// many.
constexpr char kJob[] = R"pb(
  name: "ckpt"
  mode: JOB_MODE_TRAIN_AND_EVAL
  model { logistic_regression {} }
  train_data { synthetic_clicks { num_examples: 4096 } }
  eval_data { synthetic_clicks { num_examples: 1024 } }
  checkpoint { every_steps: 100 max_to_keep: 2 max_consecutive_failures: 2 }
  stop { max_steps: 100000 }
)pb";

// A training job's checkpoints, taken of two fake shards that write through
// a TestEnv, with the job's status in a real queue and its events collected.
class JobCheckpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string root = JoinPath(::testing::TempDir(), "job_checkpoints");
    RemoveTree(posix_, root).IgnoreError();
    ASSERT_TRUE(CreateDirs(posix_, root).ok());
    JobSpec spec;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kJob, &spec));
    spec.mutable_checkpoint()->set_model_dir(JoinPath(root, "m"));
    queue_ = *JobQueue::Create(clock_);
    const absl::StatusOr<JobStatus> submitted = queue_->Submit(spec);
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    const JobStatus job = *queue_->StartNext();
    spec_ = job.spec();
    JobStatusSinks sinks;
    sinks.publish = [this](JobEvent event) { events_.push_back(std::move(event)); };
    status_ = std::make_unique<JobStatusPublisher>(job.job_id(), *queue_, clock_, sinks);
    checkpoints_ = std::make_unique<JobCheckpoints>(job.job_id(), spec_, env_, clock_, *status_,
                                                    evaluations_, nullptr);
    shards_ = FakeShardGroup({&shard0_, &shard1_});
    checkpoints_->Attach(*shards_);
    checkpoints_->StartScheduleAt(0);
    DataLeaseOptions data;
    data.num_records = 4096;
    data.epochs = 1;
    data_ = *DataLeaseManager::Create(clock_, data);
  }

  std::vector<int64_t> Kept() const {
    std::vector<int64_t> steps;
    for (const CheckpointInfo& info : checkpoints_->feed()->List()) steps.push_back(info.step());
    return steps;
  }

  void DiskFull() {
    for (int i = 0; i < 2; ++i) {
      env_.FailOn(EnvOp::kAppend, ShardFileName(i, 2),
                  absl::ResourceExhaustedError("write failed: No space left on device"));
    }
  }

  std::string model_dir() const { return spec_.checkpoint().model_dir(); }

  // The job's global step, set to `step` as the workers' reports would.
  GlobalStep& At(int64_t step) {
    EXPECT_TRUE(step_.RestoreTo(step).ok());
    return step_;
  }

  FakeClock clock_;
  PosixEnv posix_;
  TestEnv env_{&posix_};
  FakeShard shard0_{env_, "localhost:1"};
  FakeShard shard1_{env_, "localhost:2"};
  std::shared_ptr<ShardGroup> shards_;
  std::unique_ptr<JobQueue> queue_;
  JobSpec spec_;
  std::vector<JobEvent> events_;
  std::unique_ptr<JobStatusPublisher> status_;
  EvaluationLedger evaluations_;
  std::unique_ptr<JobCheckpoints> checkpoints_;
  std::unique_ptr<DataLeaseManager> data_;
  GlobalStep step_;
};

TEST_F(JobCheckpointsTest, SavesWhatTheScheduleAsksForAndKeepsMaxToKeep) {
  EXPECT_EQ(checkpoints_->TakeIfDue(At(50), *data_), std::nullopt);
  EXPECT_TRUE(Kept().empty());
  for (int64_t step : {100, 200, 300}) {
    EXPECT_EQ(checkpoints_->TakeIfDue(At(step), *data_), std::nullopt);
    checkpoints_->ApplyRetention();
  }
  EXPECT_THAT(Kept(), ElementsAre(200, 300));
  EXPECT_TRUE(VerifyCheckpoint(env_, CheckpointDir(model_dir(), 300)).ok());
  EXPECT_FALSE(*PathExists(env_, CheckpointDir(model_dir(), 100)));
  // The status lists what is kept; the evaluator never took ckpt-100 up,
  // and its event says what became of it.
  const JobStatus status = *status_->Get();
  ASSERT_EQ(status.checkpoints_size(), 2);
  EXPECT_EQ(status.checkpoints(1).step(), 300);
  bool skipped = false;
  for (const JobEvent& event : events_) {
    if (event.has_eval() && event.eval().checkpoint_step() == 100) {
      skipped = true;
      EXPECT_THAT(event.eval().skipped_reason(), HasSubstr("max_to_keep"));
    }
  }
  EXPECT_TRUE(skipped);
  EXPECT_THAT(checkpoints_->ResumeHint(), HasSubstr("resume from ckpt-300"));
}

TEST_F(JobCheckpointsTest, ACheckpointIsNamedByTheUpdatesItsShardsHold) {
  // The workers trained 3 steps since their last report when shard 1
  // snapshots its part, 1 when shard 0 does.
  shard0_.SetUpdatesSinceReported(1);
  shard1_.SetUpdatesSinceReported(3);
  GlobalStep& step = At(100);
  ASSERT_EQ(checkpoints_->TakeIfDue(step, *data_), std::nullopt);
  EXPECT_EQ(step.value(), 103);
  EXPECT_THAT(Kept(), ElementsAre(103));
  const absl::StatusOr<CheckpointManifest> manifest =
      VerifyCheckpoint(env_, CheckpointDir(model_dir(), 103));
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(manifest->global_step(), 103);
  EXPECT_FALSE(*PathExists(env_, CheckpointDir(model_dir(), 100)));
  // The schedule counts from the step saved: the next is due at 203.
  EXPECT_EQ(checkpoints_->TakeIfDue(At(200), *data_), std::nullopt);
  EXPECT_THAT(Kept(), ElementsAre(103));
}

TEST_F(JobCheckpointsTest, ALeasedCheckpointOutlivesMaxToKeep) {
  ASSERT_EQ(checkpoints_->TakeIfDue(At(100), *data_), std::nullopt);
  ASSERT_TRUE(checkpoints_->retention()->Acquire(100, "evaluator/0#1").ok());
  for (int64_t step : {200, 300}) ASSERT_EQ(checkpoints_->TakeIfDue(At(step), *data_), std::nullopt);
  checkpoints_->ApplyRetention();
  EXPECT_THAT(Kept(), ElementsAre(100, 200, 300));
  ASSERT_TRUE(checkpoints_->retention()->Release(100, "evaluator/0#1").ok());
  checkpoints_->ApplyRetention();
  EXPECT_THAT(Kept(), ElementsAre(200, 300));
}

TEST_F(JobCheckpointsTest, FailuresInARowAreEventsThenTooManyAndTheLastGoodCheckpointStays) {
  ASSERT_EQ(checkpoints_->TakeIfDue(At(100), *data_), std::nullopt);
  DiskFull();
  EXPECT_EQ(checkpoints_->TakeIfDue(At(200), *data_), std::nullopt);  // one failure: train on
  // The schedule tries again one interval later, not at every report.
  EXPECT_EQ(checkpoints_->TakeIfDue(At(250), *data_), std::nullopt);
  const std::optional<std::string> too_many = checkpoints_->TakeIfDue(At(300), *data_);
  ASSERT_TRUE(too_many.has_value());
  EXPECT_THAT(*too_many, HasSubstr("No space left on device"));

  std::vector<int64_t> failed;
  for (const JobEvent& event : events_) {
    if (event.has_checkpoint_failure()) failed.push_back(event.checkpoint_failure().step());
  }
  EXPECT_THAT(failed, ElementsAre(200, 300));
  EXPECT_EQ(status_->Get()->checkpoint_failures(), 2);
  EXPECT_THAT(Kept(), ElementsAre(100));
  EXPECT_TRUE(VerifyCheckpoint(env_, CheckpointDir(model_dir(), 100)).ok());
}

TEST_F(JobCheckpointsTest, TheFinalCheckpointReplacesAPeriodicOneAtItsStep) {
  ASSERT_EQ(checkpoints_->TakeIfDue(At(100), *data_), std::nullopt);
  ASSERT_TRUE(checkpoints_->TakeFinal(At(100), *data_).ok());
  EXPECT_EQ(checkpoints_->final_step(), 100);
  EXPECT_TRUE(checkpoints_->IsFinal(100));
  const absl::StatusOr<CheckpointManifest> manifest =
      VerifyCheckpoint(env_, CheckpointDir(model_dir(), 100));
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_TRUE(manifest->final());
}

TEST_F(JobCheckpointsTest, AFinalCheckpointAnEvaluatorHoldsIsAnnouncedFinalAsItIs) {
  ASSERT_EQ(checkpoints_->TakeIfDue(At(100), *data_), std::nullopt);
  ASSERT_TRUE(checkpoints_->retention()->Acquire(100, "evaluator/0#1").ok());
  ASSERT_TRUE(checkpoints_->TakeFinal(At(100), *data_).ok());
  EXPECT_TRUE(checkpoints_->IsFinal(100));
  // Not rewritten under the evaluator's feet.
  EXPECT_FALSE(VerifyCheckpoint(env_, CheckpointDir(model_dir(), 100))->final());
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
