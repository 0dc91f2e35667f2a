#include "common/config/job_spec.h"

#include <string>

#include "absl/status/status.h"
#include "common/config/job_spec_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The least a user writes to train an MLP on Fashion-MNIST.
constexpr char kMinimalFashionMnistMlp[] = R"pb(
  model { mlp {} }
  train_data { fashion_mnist {} }
  eval_data { fashion_mnist {} }
  stop { max_steps: 1000 }
  checkpoint { model_dir: "/tmp/pstrain/mlp" }
)pb";

absl::StatusOr<JobSpec> Prepare(const std::string& text) {
  absl::StatusOr<JobSpec> raw = ParseJobSpecText(text);
  if (!raw.ok()) return raw.status();
  return PrepareJobSpec(*std::move(raw));
}

TEST(PrepareJobSpecTest, MinimalFashionMnistMlpPassesWithDefaultsFilled) {
  absl::StatusOr<JobSpec> spec = Prepare(kMinimalFashionMnistMlp);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name(), "job");
  EXPECT_EQ(spec->mode(), JOB_MODE_TRAIN_AND_EVAL);
  EXPECT_THAT(spec->model().mlp().hidden_units(), ElementsAre(256, 128));
  EXPECT_EQ(spec->model().mlp().activation(), ACTIVATION_RELU);
  EXPECT_EQ(spec->train_data().fashion_mnist().dir(), "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(spec->train_data().fashion_mnist().split(), DATA_SPLIT_TRAIN);
  EXPECT_EQ(spec->eval_data().fashion_mnist().split(), DATA_SPLIT_TEST);
  EXPECT_EQ(spec->train_data().batch_size(), 128);
  EXPECT_TRUE(spec->train_data().shuffle());
  EXPECT_FALSE(spec->eval_data().shuffle());
  EXPECT_EQ(spec->train_data().prefetch_batches(), 2);
  EXPECT_TRUE(spec->optimizer().has_sgd());
  EXPECT_FLOAT_EQ(spec->optimizer().learning_rate(), 0.01f);
  EXPECT_EQ(spec->training().update_mode(), UPDATE_MODE_ASYNC);
  EXPECT_EQ(spec->training().steps_per_loop(), 100);
  EXPECT_EQ(spec->training().compute_threads(), 1);
  EXPECT_TRUE(spec->stop().stop_on_nan_loss());
  EXPECT_EQ(spec->stop().max_steps(), 1000);
  EXPECT_EQ(spec->checkpoint().every_seconds(), 600);
  EXPECT_EQ(spec->checkpoint().max_to_keep(), 5);
  EXPECT_EQ(spec->eval().throttle_secs(), 10);
  EXPECT_THAT(spec->eval().metrics(), ElementsAre("loss", "accuracy"));
  EXPECT_EQ(spec->eval().top_k(), 5);
  EXPECT_EQ(spec->eval().best_metric(), "loss");
  EXPECT_EQ(spec->eval().best_direction(), METRIC_DIRECTION_MINIMIZE);
  EXPECT_EQ(spec->export_().strategy(), EXPORT_STRATEGY_BEST);
  EXPECT_EQ(spec->export_().export_dir(), "/tmp/pstrain/mlp/export");
  EXPECT_EQ(spec->export_().exports_to_keep(), 3);
}

TEST(PrepareJobSpecTest, PreparedSpecPreparesToItself) {
  absl::StatusOr<JobSpec> once = Prepare(kMinimalFashionMnistMlp);
  ASSERT_TRUE(once.ok()) << once.status();
  // The coordinator may prepare a spec that came back from JobStatus.spec.
  absl::StatusOr<JobSpec> twice = PrepareJobSpec(*once);
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_EQ(once->SerializeAsString(), twice->SerializeAsString());
}

TEST(PrepareJobSpecTest, EveryOptimizerPasses) {
  struct Case {
    const char* optimizer;
    void (*check)(const OptimizerSpec&);
  };
  const Case cases[] = {
      {"sgd {}", [](const OptimizerSpec& o) { EXPECT_TRUE(o.has_sgd()); }},
      {"momentum { nesterov: true }",
       [](const OptimizerSpec& o) {
         EXPECT_FLOAT_EQ(o.momentum().momentum(), 0.9f);
         EXPECT_TRUE(o.momentum().nesterov());
       }},
      {"adagrad {}",
       [](const OptimizerSpec& o) {
         EXPECT_FLOAT_EQ(o.adagrad().initial_accumulator(), 0.1f);
         EXPECT_FLOAT_EQ(o.adagrad().epsilon(), 1e-7f);
       }},
      {"adam {}",
       [](const OptimizerSpec& o) {
         EXPECT_FLOAT_EQ(o.adam().beta1(), 0.9f);
         EXPECT_FLOAT_EQ(o.adam().beta2(), 0.999f);
         EXPECT_FLOAT_EQ(o.adam().epsilon(), 1e-8f);
       }},
      {"ftrl { l1: 0.01 }",
       [](const OptimizerSpec& o) {
         EXPECT_FLOAT_EQ(o.ftrl().learning_rate_power(), -0.5f);
         EXPECT_FLOAT_EQ(o.ftrl().initial_accumulator(), 0.1f);
         EXPECT_FLOAT_EQ(o.ftrl().l1(), 0.01f);
       }},
  };
  for (const Case& c : cases) {
    absl::StatusOr<JobSpec> spec =
        Prepare(std::string(kMinimalFashionMnistMlp) + "optimizer { " + c.optimizer + " }");
    ASSERT_TRUE(spec.ok()) << c.optimizer << ": " << spec.status();
    EXPECT_FLOAT_EQ(spec->optimizer().learning_rate(), 0.01f) << c.optimizer;
    c.check(spec->optimizer());
  }
}

TEST(PrepareJobSpecTest, EverySchedulePasses) {
  struct Case {
    const char* schedule;
    void (*check)(const LearningRateSchedule&);
  };
  const Case cases[] = {
      {"warmup_steps: 100",
       [](const LearningRateSchedule& s) { EXPECT_EQ(s.warmup_steps(), 100); }},
      {"step { step_size: 1000 }",
       [](const LearningRateSchedule& s) {
         EXPECT_EQ(s.step().step_size(), 1000);
         EXPECT_FLOAT_EQ(s.step().factor(), 0.1f);
       }},
      {"exponential { decay_steps: 500 staircase: true }",
       [](const LearningRateSchedule& s) {
         EXPECT_FLOAT_EQ(s.exponential().rate(), 0.96f);
         EXPECT_TRUE(s.exponential().staircase());
       }},
      {"cosine { decay_steps: 3000 } warmup_steps: 200",
       [](const LearningRateSchedule& s) {
         EXPECT_EQ(s.cosine().alpha(), 0);
         EXPECT_EQ(s.warmup_steps(), 200);
       }},
  };
  for (const Case& c : cases) {
    absl::StatusOr<JobSpec> spec =
        Prepare(std::string(kMinimalFashionMnistMlp) + "optimizer { adam {} learning_rate: 0.001 " +
                "schedule { " + c.schedule + " } }");
    ASSERT_TRUE(spec.ok()) << c.schedule << ": " << spec.status();
    c.check(spec->optimizer().schedule());
  }
}

TEST(PrepareJobSpecTest, EveryModelKindPasses) {
  const char* specs[] = {
      R"pb(model { linear_regression {} }
           train_data {
             csv { path: "/data/house.csv" has_header: true }
             epochs: 10
           }
           eval_data { csv { path: "/data/house_test.csv" has_header: true } }
           checkpoint { model_dir: "/tmp/lin" })pb",
      R"pb(model { logistic_regression { num_classes: 2 } }
           train_data {
             libsvm { path: "/data/a9a" }
             epochs: 5
           }
           eval_data { libsvm { path: "/data/a9a.t" } }
           checkpoint { model_dir: "/tmp/log" })pb",
      R"pb(model { cnn { dropout: 0.25 } }
           train_data { fashion_mnist {} }
           eval_data { fashion_mnist {} }
           stop { max_seconds: 600 }
           checkpoint { model_dir: "/tmp/cnn" })pb",
      R"pb(model { wide_and_deep { embedding { max_bytes_per_shard: 1048576 admit_after: 2 } } }
           train_data { synthetic_clicks { seed: 1 } }
           eval_data { synthetic_clicks { seed: 1 num_examples: 10000 } }
           optimizer {
             ftrl {}
             learning_rate: 0.05
           }
           stop { max_steps: 2000 }
           checkpoint { model_dir: "/tmp/wd" })pb",
      R"pb(model { plugin { library_path: "/opt/models/libmine.so" config: "{}" } }
           train_data { fashion_mnist {} }
           eval_data { fashion_mnist {} }
           stop { max_steps: 10 }
           checkpoint { model_dir: "/tmp/plugin" })pb",
  };
  for (const char* text : specs) {
    absl::StatusOr<JobSpec> spec = Prepare(text);
    EXPECT_TRUE(spec.ok()) << text << "\n" << spec.status();
  }
}

TEST(PrepareJobSpecTest, EveryModeAndUpdateModePasses) {
  const char* specs[] = {
      R"pb(mode: JOB_MODE_TRAIN
           model { mlp {} }
           train_data {
             fashion_mnist {}
             epochs: 2
           }
           checkpoint { model_dir: "/tmp/t" })pb",
      R"pb(mode: JOB_MODE_EVAL
           model { mlp {} }
           eval_data { fashion_mnist {} }
           checkpoint { model_dir: "/tmp/t" })pb",
      R"pb(mode: JOB_MODE_CONTINUOUS_EVAL
           model { mlp {} }
           eval_data { fashion_mnist {} }
           checkpoint { model_dir: "/tmp/t" })pb",
      R"pb(model { mlp {} }
           train_data { fashion_mnist {} }
           eval_data { fashion_mnist {} }
           training { update_mode: UPDATE_MODE_SYNC replicas_to_aggregate: 2 }
           stop { max_steps: 100 early_stopping_patience: 3 min_delta: 0.001 }
           eval {
             metrics: [ "loss", "accuracy" ]
             best_metric: "accuracy"
           }
           checkpoint { model_dir: "/tmp/t" every_steps: 100 })pb",
      R"pb(model { mlp {} }
           train_data { fashion_mnist {} }
           eval_data { fashion_mnist {} }
           training { update_mode: UPDATE_MODE_BOUNDED_STALENESS staleness_bound: 2 }
           stop { max_steps: 100 target_metric_value: 0.85 }
           eval {
             metrics: [ "accuracy", "loss", "top_k_accuracy" ]
             best_metric: "accuracy"
             top_k: 3
           }
           checkpoint { model_dir: "/tmp/t" })pb",
  };
  for (const char* text : specs) {
    absl::StatusOr<JobSpec> spec = Prepare(text);
    EXPECT_TRUE(spec.ok()) << text << "\n" << spec.status();
  }
}

TEST(PrepareJobSpecTest, RefusesAnInvalidSpecNamingEveryField) {
  absl::StatusOr<JobSpec> spec = Prepare(
      "model { mlp {} } train_data { fashion_mnist {} } mode: JOB_MODE_TRAIN "
      "optimizer { learning_rate: -1 } stop { max_steps: 5 }");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(spec.status().message()),
            "optimizer.learning_rate must be > 0, got -1; checkpoint.model_dir is required");
}

}  // namespace
}  // namespace pstrain
