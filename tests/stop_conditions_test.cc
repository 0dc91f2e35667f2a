// Each stop condition ends a job the right way on a real cluster
// (coordinator, a parameter server, a worker and an evaluator as processes
// on loopback): the state and stop reason, the final checkpoint and its
// evaluation where they are due, a reason a person can act on where the
// job failed, and a cluster ready for the next job. A user's stop, then
// the same job submitted again, resumes from the saved step.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/cluster_fixture.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using testing_cluster::JobRecord;
using testing_cluster::TestCluster;

// Logistic regression on synthetic click logs: 50,000 records (no epoch
// ends the job), checkpoints every 100 steps, a report every 10.
std::string ClicksJob(const std::string& mode, const std::string& dir, const std::string& stop,
                      const std::string& eval = "") {
  testing_jobs::ClicksJob job;
  job.mode = mode;
  job.model_dir = dir;
  job.num_examples = 50000;
  job.max_steps = 0;
  job.steps_per_loop = 10;
  job.checkpoint_every_steps = 100;
  job.stop = stop;
  job.eval = eval;
  return job.Text();
}

class StopConditionsTest : public testing_cluster::SharedClusterTest<StopConditionsTest> {
 protected:
  static void SetUpTestSuite() {
    LocalClusterOptions options;
    options.num_ps = 1;
    options.num_workers = 1;
    if (!StartSharedCluster("stop_conditions", options)) return;
  }

  void TearDown() override {
    // Whatever the job did, every process is still up for the next one.
    if (cluster_ != nullptr) {
      EXPECT_TRUE(cluster_->cluster().CheckHealthy().ok());
    }
  }

  JobRecord Run(const std::string& spec) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(spec);
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok()) return {};
    return cluster_->Follow(*job_id);
  }

};


TEST_F(StopConditionsTest, MaxSecondsEndsTrainingOnTimeWithAFinalCheckpoint) {
  const JobRecord job = Run(ClicksJob("JOB_MODE_TRAIN", "max_seconds", "max_seconds: 3"));
  const JobStatus& status = job.final_status;
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_MAX_SECONDS) << status.reason();
  EXPECT_GT(status.global_step(), 0);
  // Training time counts from the start of training; the job also waited
  // for nothing else, so it ends soon after.
  const int64_t ran_ms = status.end_unix_ms() - status.start_unix_ms();
  EXPECT_GE(ran_ms, 3000) << status.ShortDebugString();
  EXPECT_LT(ran_ms, 60000) << status.ShortDebugString();
  ASSERT_FALSE(status.checkpoints().empty());
  EXPECT_TRUE(status.checkpoints().rbegin()->final());
  EXPECT_EQ(status.checkpoints().rbegin()->step(), status.global_step());
}

TEST_F(StopConditionsTest, ANanLossFailsTheJobSayingWhatToChange) {
  // tanh units and a learning rate near the float limit overflow the
  // weights within a few steps.
  const JobRecord job = Run(R"pb(
    name: "diverges"
    mode: JOB_MODE_TRAIN
    model {
      mlp {
        hidden_units: [ 32 ]
        activation: ACTIVATION_TANH
      }
    }
    train_data {
      fashion_mnist {}
      batch_size: 64
    }
    optimizer {
      sgd {}
      learning_rate: 1e38
    }
    training { steps_per_loop: 1 }
    stop { max_steps: 1000 }
    checkpoint { model_dir: "diverges" every_steps: 500 }
  )pb");
  const JobStatus& status = job.final_status;
  EXPECT_EQ(status.state(), JOB_STATE_FAILED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_NAN_LOSS) << status.reason();
  EXPECT_THAT(status.reason(), HasSubstr("optimizer.learning_rate"));
  EXPECT_LT(status.global_step(), 1000);
  // No checkpoint of diverged weights: a resume would only diverge again.
  EXPECT_TRUE(status.checkpoints().empty()) << status.ShortDebugString();
}

TEST_F(StopConditionsTest, TheTargetMetricEndsTrainingOnceAnEvaluationReachesIt) {
  const JobRecord job =
      Run(ClicksJob("JOB_MODE_TRAIN_AND_EVAL", "target",
                    "max_steps: 100000 target_metric_value: 0.6", "best_metric: \"auc\""));
  const JobStatus& status = job.final_status;
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_TARGET_METRIC) << status.reason();
  EXPECT_LT(status.global_step(), 100000);
  ASSERT_TRUE(status.last_eval_metrics().contains("auc")) << status.ShortDebugString();
  EXPECT_GE(status.last_eval_metrics().at("auc"), 0.6);
  // The final checkpoint is evaluated before the job is done.
  EXPECT_EQ(status.last_eval_step(), status.global_step());
}

TEST_F(StopConditionsTest, EarlyStoppingEndsTrainingAfterPatienceEvaluationsWithoutProgress) {
  // No evaluation can improve the loss by 100: the first sets the
  // reference, the next two do not improve on it, and training stops.
  const JobRecord job = Run(ClicksJob("JOB_MODE_TRAIN_AND_EVAL", "early",
                                      "max_steps: 100000 early_stopping_patience: 2 min_delta: 100",
                                      "best_metric: \"loss\""));
  const JobStatus& status = job.final_status;
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_EARLY_STOPPING) << status.reason();
  int evaluated = 0;
  for (const EvalEvent& eval : job.Evaluations()) evaluated += eval.metrics().empty() ? 0 : 1;
  // Three periodic evaluations, then the final checkpoint's.
  EXPECT_GE(evaluated, 3) << status.ShortDebugString();
  EXPECT_EQ(status.last_eval_step(), status.global_step());
}

TEST_F(StopConditionsTest, AUserStopSavesTheStepAndTheSameJobResumesFromIt) {
  const std::string spec = ClicksJob("JOB_MODE_TRAIN", "resumed", "max_steps: 1500");
  absl::StatusOr<std::string> first = cluster_->Submit(spec);
  ASSERT_TRUE(first.ok()) << first.status();
  bool stop_sent = false;
  const JobRecord stopped = cluster_->Follow(*first, [&](const JobEvent& event) {
    if (!stop_sent && event.has_progress() && event.progress().global_step() >= 300) {
      stop_sent = true;
      EXPECT_TRUE(cluster_->Stop(*first).ok());
    }
  });
  const JobStatus& at_stop = stopped.final_status;
  ASSERT_TRUE(stop_sent) << at_stop.ShortDebugString();
  EXPECT_EQ(at_stop.state(), JOB_STATE_STOPPED) << at_stop.ShortDebugString();
  EXPECT_EQ(at_stop.stop_reason(), STOP_REASON_USER);
  EXPECT_GE(at_stop.global_step(), 300);
  EXPECT_LT(at_stop.global_step(), 1500);
  // Stopped, not lost: the final checkpoint holds the step reached.
  ASSERT_FALSE(at_stop.checkpoints().empty());
  EXPECT_TRUE(at_stop.checkpoints().rbegin()->final());
  EXPECT_EQ(at_stop.checkpoints().rbegin()->step(), at_stop.global_step());

  const JobRecord resumed = Run(spec);
  const JobStatus& status = resumed.final_status;
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.resumed_from_step(), at_stop.global_step());
  EXPECT_THAT(status.resumed_from(), HasSubstr(absl::StrCat("ckpt-", at_stop.global_step())));
  // It continues from the saved step, not from zero.
  const std::vector<ProgressEvent> progress = resumed.Progress();
  ASSERT_FALSE(progress.empty());
  EXPECT_GT(progress.front().global_step(), at_stop.global_step());
  EXPECT_GE(status.global_step(), 1500);
}

}  // namespace
}  // namespace pstrain
