#include "common/training/local_trainer.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/data/test_files.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

constexpr char kAdam[] = "optimizer { adam {} learning_rate: 0.01 }";
constexpr char kEval[] = R"(eval { metrics: ["loss", "accuracy", "top_k_accuracy"] top_k: 2 })";

JobSpec ToySpec(const std::string& extra, const std::string& optimizer = kAdam,
                const std::string& eval = kEval) {
  const std::string dir = testing_util::WriteToyImageDataset(300, 90);
  const std::string text = absl::StrCat(R"(
    model { mlp { hidden_units: [16] } }
    train_data { fashion_mnist { dir: ")",
                                        dir, R"(" } batch_size: 20 epochs: 5 }
    eval_data { fashion_mnist { dir: ")",
                                        dir, R"(" } batch_size: 50 }
    training { steps_per_loop: 10 seed: 3 }
    checkpoint { model_dir: "/tmp/unused" }
  )",
                                        optimizer, eval, extra);
  auto raw = ParseJobSpecText(text);
  EXPECT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

TEST(LocalTrainerTest, TrainsAndEvaluatesToyImages) {
  int progress_reports = 0;
  LocalTrainerOptions options;
  options.on_progress = [&](const TrainingProgress& p) {
    ++progress_reports;
    EXPECT_GT(p.examples_per_sec, 0);
  };
  auto trainer = LocalTrainer::Create(ToySpec(""), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  EXPECT_EQ((*trainer)->train_info().num_classes, 3);
  auto before = (*trainer)->Evaluate();
  ASSERT_TRUE(before.ok()) << before.status();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  // 5 epochs of 300 examples in batches of 20.
  EXPECT_EQ(result->global_step, 75);
  EXPECT_EQ(result->examples, 1500);
  EXPECT_EQ(result->stop_reason, STOP_REASON_END_OF_DATA);
  EXPECT_EQ(progress_reports, 7);
  EXPECT_GT(result->examples_per_sec, 0);
  EXPECT_GE(result->eval_metrics.at("accuracy"), 0.95);
  EXPECT_LT(result->eval_metrics.at("loss"), before->metrics.at("loss") / 3);
  EXPECT_EQ(result->eval_metrics.at("top_k_accuracy"), 1.0);
}

TEST(LocalTrainerTest, StopsAtMaxStepsAndTargetMetric) {
  LocalTrainerOptions options;
  options.max_steps = 7;
  auto trainer = LocalTrainer::Create(ToySpec(""), options);
  ASSERT_TRUE(trainer.ok());
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->global_step, 7);
  EXPECT_EQ(result->stop_reason, STOP_REASON_MAX_STEPS);
  EXPECT_EQ(result->stop_message, "reached max_steps 7");

  LocalTrainerOptions eval_often;
  eval_often.eval_every_steps = 5;
  int evaluations = 0;
  eval_often.on_evaluation = [&](const EvaluationResult&) { ++evaluations; };
  auto targeted = LocalTrainer::Create(
      ToySpec("stop { target_metric_value: 0.9 }", kAdam,
              R"(eval { metrics: ["loss", "accuracy"] best_metric: "accuracy" })"),
      eval_often);
  ASSERT_TRUE(targeted.ok()) << targeted.status();
  auto stopped = (*targeted)->Run();
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->stop_reason, STOP_REASON_TARGET_METRIC);
  EXPECT_LT(stopped->global_step, 75);
  EXPECT_EQ(stopped->global_step % 5, 0);
  EXPECT_GE(evaluations, 2);  // the periodic ones and the final one
}

TEST(LocalTrainerTest, StopsEarlyAfterPatienceEvaluationsWithoutImprovement) {
  // min_delta 10 on accuracy (at most 1): no evaluation improves on the
  // first, so training stops at the third, as a cluster's would.
  LocalTrainerOptions options;
  options.eval_every_steps = 5;
  auto trainer = LocalTrainer::Create(
      ToySpec("stop { early_stopping_patience: 2 min_delta: 10 }", kAdam,
              R"(eval { metrics: ["loss", "accuracy"] best_metric: "accuracy" })"),
      options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stop_reason, STOP_REASON_EARLY_STOPPING);
  EXPECT_EQ(result->global_step, 15);
}

TEST(LocalTrainerTest, StopsAtMaxSecondsOfTheInjectedClock) {
  // Every reading of the clock advances it by one second: each step takes
  // a second of training time.
  absl::Time now = absl::UnixEpoch();
  LocalTrainerOptions options;
  options.now = [&now] {
    now += absl::Seconds(1);
    return now;
  };
  auto trainer = LocalTrainer::Create(ToySpec("stop { max_seconds: 4.5 }"), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stop_reason, STOP_REASON_MAX_SECONDS);
  EXPECT_EQ(result->global_step, 5);
  EXPECT_DOUBLE_EQ(result->train_seconds, 5);
  EXPECT_DOUBLE_EQ(result->examples_per_sec, 100.0 / 5);
}

TEST(LocalTrainerTest, AStopFromAProgressReportEndsTrainingBeforeTheNextStep) {
  LocalTrainer* running = nullptr;
  LocalTrainerOptions options;
  options.on_progress = [&](const TrainingProgress& p) {
    if (p.global_step == 20) running->Stop(STOP_REASON_CHECKPOINT_FAILURES, "checkpoints failed");
  };
  auto trainer = LocalTrainer::Create(ToySpec(""), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  running = trainer->get();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->global_step, 20);
  EXPECT_EQ(result->stop_reason, STOP_REASON_CHECKPOINT_FAILURES);
  EXPECT_EQ(result->stop_message, "checkpoints failed");
}

TEST(LocalTrainerTest, StopsOnNanLoss) {
  // A learning rate this large overflows the weights within a few steps.
  auto trainer = LocalTrainer::Create(ToySpec("", "optimizer { sgd {} learning_rate: 1e30 }"), {});
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stop_reason, STOP_REASON_NAN_LOSS);
}

TEST(LocalTrainerTest, ReportsMissingDataAndOffThreadUse) {
  auto raw = ParseJobSpecText(R"(
    model { mlp {} }
    train_data { fashion_mnist { dir: "/nonexistent" } }
    checkpoint { model_dir: "/tmp/unused" }
    stop { max_steps: 10 }
    mode: JOB_MODE_TRAIN
  )");
  ASSERT_TRUE(raw.ok());
  auto spec = PrepareJobSpec(*raw);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(LocalTrainer::Create(*spec, {}).status().code(), absl::StatusCode::kNotFound);

  auto trainer = LocalTrainer::Create(ToySpec(""), {});
  ASSERT_TRUE(trainer.ok());
  std::thread([&] {
    EXPECT_EQ((*trainer)->Run().status().code(), absl::StatusCode::kFailedPrecondition);
  }).join();
}

}  // namespace
}  // namespace pstrain
