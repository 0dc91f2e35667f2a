#include "server/coordinator/job_status_publisher.h"

#include <memory>
#include <utility>
#include <vector>

#include "common/clock/fake_clock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

// A running job in a real queue, whose events and journal records are
// collected.
class JobStatusPublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    queue_ = *JobQueue::Create(clock_);
    JobSpec spec;
    spec.mutable_model()->mutable_mlp();
    spec.mutable_train_data()->mutable_fashion_mnist();
    spec.mutable_checkpoint()->set_model_dir("/tmp/pstrain/mlp");
    spec.mutable_eval_data()->mutable_fashion_mnist();
    spec.mutable_stop()->set_max_steps(1000);
    spec.set_name("mnist");
    const absl::StatusOr<JobStatus> submitted = queue_->Submit(spec);
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    const JobStatus job = *queue_->StartNext();
    JobStatusSinks sinks;
    sinks.publish = [this](JobEvent event) { events_.push_back(std::move(event)); };
    sinks.record = [this](const JobStatus& job) { recorded_.push_back(job); };
    publisher_ = std::make_unique<JobStatusPublisher>(job.job_id(), *queue_, clock_, sinks);
  }

  JobStatus Status() const { return *publisher_->Get(); }

  ReportedProgress Progress(const std::string& reporter, int64_t step, double rate) const {
    ReportedProgress progress;
    progress.reporter = reporter;
    progress.examples_per_sec = rate;
    progress.step = step;
    progress.loss = 0.5;
    return progress;
  }

  FakeClock clock_;
  std::unique_ptr<JobQueue> queue_;
  std::vector<JobEvent> events_;
  std::vector<JobStatus> recorded_;
  std::unique_ptr<JobStatusPublisher> publisher_;
};

TEST_F(JobStatusPublisherTest, AReasonGoesOutWhenWhatTheJobDoesChangesNotWhenAWaitAges) {
  WaitTracker tracker(clock_, "ps/1", clock_.Now() + absl::Minutes(10));
  publisher_->SetWaitReason("", tracker);
  ASSERT_EQ(events_.size(), 1u);
  clock_.Advance(absl::Seconds(30));
  publisher_->SetWaitReason("", tracker);
  EXPECT_EQ(events_.size(), 1u);
  // The status itself shows the wait's age.
  EXPECT_EQ(Status().reason(), "waiting for ps/1 since 30s");
  publisher_->SetReason("restoring ckpt-400");
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[1].status().reason(), "restoring ckpt-400");
}

TEST_F(JobStatusPublisherTest, ProgressOnlyMovesForwardAndAddsUpTheReportersRates) {
  publisher_->PublishProgress(Progress("worker/0#1", 200, 1000), nullptr);
  publisher_->PublishProgress(Progress("worker/1#1", 150, 500), nullptr);  // counted earlier
  EXPECT_EQ(Status().global_step(), 200);
  EXPECT_DOUBLE_EQ(publisher_->examples_per_sec(), 1500);
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].progress().global_step(), 200);
  EXPECT_DOUBLE_EQ(events_[0].progress().examples_per_sec(), 1000);

  publisher_->ForgetReporter("worker/1#1");
  EXPECT_DOUBLE_EQ(publisher_->examples_per_sec(), 1000);
}

TEST_F(JobStatusPublisherTest, ProgressCarriesTheScheduledLearningRateAtItsStep) {
  EXPECT_EQ(events_.size(), 0u);
  publisher_->PublishProgress(Progress("worker/0#1", 100, 1000), nullptr);
  ASSERT_EQ(events_.size(), 1u);
  // Without a schedule (a job that does not train) there is none.
  EXPECT_EQ(events_[0].progress().learning_rate(), 0);

  OptimizerSpec optimizer;
  optimizer.set_learning_rate(0.1);
  optimizer.mutable_schedule()->mutable_step()->set_step_size(100);
  optimizer.mutable_schedule()->mutable_step()->set_factor(0.5);
  absl::StatusOr<LearningRate> rate = LearningRate::Create(optimizer);
  ASSERT_TRUE(rate.ok()) << rate.status();
  JobStatusSinks sinks;
  sinks.publish = [this](JobEvent event) { events_.push_back(std::move(event)); };
  JobStatusPublisher scheduled(Status().job_id(), *queue_, clock_, sinks, *rate);
  scheduled.PublishProgress(Progress("worker/0#1", 250, 1000), nullptr);
  ASSERT_EQ(events_.size(), 2u);
  // 0.1 * 0.5^2, the base rate being a float.
  EXPECT_FLOAT_EQ(events_[1].progress().learning_rate(), 0.025);
}

TEST_F(JobStatusPublisherTest, ARollbackIsTheOneMoveOfTheStepBackwards) {
  publisher_->PublishProgress(Progress("worker/0#1", 700, 1000), nullptr);
  publisher_->RestartProgressAt(400);
  EXPECT_EQ(Status().global_step(), 400);
  EXPECT_DOUBLE_EQ(publisher_->examples_per_sec(), 0);
  publisher_->PublishProgress(Progress("worker/0#2", 420, 900), nullptr);
  EXPECT_EQ(Status().global_step(), 420);
  publisher_->Record();
  ASSERT_EQ(recorded_.size(), 1u);
  EXPECT_EQ(recorded_[0].global_step(), 420);
}

TEST_F(JobStatusPublisherTest, EndsTheJobThroughFinishingAndPublishesItsFinalStatus) {
  publisher_->BeginFinishing(STOP_REASON_MAX_STEPS, "reached max_steps 1000");
  EXPECT_EQ(Status().state(), JOB_STATE_FINISHING);
  publisher_->End(JOB_STATE_SUCCEEDED, "reached max_steps 1000");
  EXPECT_EQ(Status().state(), JOB_STATE_SUCCEEDED);
  ASSERT_FALSE(events_.empty());
  EXPECT_EQ(events_.back().status().state(), JOB_STATE_SUCCEEDED);
  EXPECT_EQ(events_.back().unix_ms(), absl::ToUnixMillis(clock_.Now()));
}

TEST_F(JobStatusPublisherTest, AFailedJobEndsWithoutFinishing) {
  publisher_->End(JOB_STATE_FAILED, "ps/1 never registered");
  const JobStatus status = Status();
  EXPECT_EQ(status.state(), JOB_STATE_FAILED);
  EXPECT_EQ(status.reason(), "ps/1 never registered");
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
