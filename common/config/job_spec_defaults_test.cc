#include "common/config/job_spec_defaults.h"

#include <string>

#include "common/config/job_spec_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;

JobSpec Filled(const std::string& text) {
  absl::StatusOr<JobSpec> spec = ParseJobSpecText(text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  JobSpec filled = spec.ok() ? *spec : JobSpec();
  FillJobSpecDefaults(&filled);
  return filled;
}

TEST(FillJobSpecDefaultsTest, FillsEveryDocumentedDefault) {
  const JobSpec spec = Filled(R"pb(
    model { mlp {} }
    train_data { fashion_mnist {} }
    eval_data { fashion_mnist {} }
    checkpoint { model_dir: "/tmp/m" }
  )pb");

  EXPECT_EQ(spec.name(), "job");
  EXPECT_EQ(spec.mode(), JOB_MODE_TRAIN_AND_EVAL);

  const MlpSpec& mlp = spec.model().mlp();
  EXPECT_THAT(mlp.hidden_units(), ElementsAre(256, 128));
  EXPECT_EQ(mlp.activation(), ACTIVATION_RELU);
  EXPECT_EQ(mlp.dropout(), 0);
  EXPECT_EQ(mlp.input_dim(), 0);    // from the data
  EXPECT_EQ(mlp.num_classes(), 0);  // from the data

  const DataSpec& train = spec.train_data();
  EXPECT_EQ(train.fashion_mnist().dir(), "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(train.fashion_mnist().split(), DATA_SPLIT_TRAIN);
  EXPECT_EQ(train.batch_size(), 128);
  ASSERT_TRUE(train.has_shuffle());
  EXPECT_TRUE(train.shuffle());
  EXPECT_EQ(train.prefetch_batches(), 2);
  EXPECT_EQ(train.epochs(), 0);

  const DataSpec& eval_data = spec.eval_data();
  EXPECT_EQ(eval_data.fashion_mnist().split(), DATA_SPLIT_TEST);
  ASSERT_TRUE(eval_data.has_shuffle());
  EXPECT_FALSE(eval_data.shuffle());
  EXPECT_EQ(eval_data.batch_size(), 128);

  EXPECT_TRUE(spec.optimizer().has_sgd());
  ASSERT_TRUE(spec.optimizer().has_learning_rate());
  EXPECT_FLOAT_EQ(spec.optimizer().learning_rate(), 0.01f);
  EXPECT_FALSE(spec.optimizer().has_schedule());  // constant
  EXPECT_EQ(spec.optimizer().clip_norm(), 0);

  EXPECT_EQ(spec.training().update_mode(), UPDATE_MODE_ASYNC);
  EXPECT_EQ(spec.training().staleness_bound(), 0);  // async has no bound
  EXPECT_EQ(spec.training().replicas_to_aggregate(), 0);
  EXPECT_EQ(spec.training().steps_per_loop(), 100);
  EXPECT_EQ(spec.training().compute_threads(), 1);

  ASSERT_TRUE(spec.stop().has_stop_on_nan_loss());
  EXPECT_TRUE(spec.stop().stop_on_nan_loss());
  EXPECT_FALSE(spec.stop().has_target_metric_value());

  EXPECT_EQ(spec.checkpoint().every_steps(), 0);
  EXPECT_EQ(spec.checkpoint().every_seconds(), 600);
  ASSERT_TRUE(spec.checkpoint().has_max_to_keep());
  EXPECT_EQ(spec.checkpoint().max_to_keep(), 5);
  ASSERT_TRUE(spec.checkpoint().has_max_consecutive_failures());
  EXPECT_EQ(spec.checkpoint().max_consecutive_failures(), 3);

  ASSERT_TRUE(spec.eval().has_throttle_secs());
  EXPECT_EQ(spec.eval().throttle_secs(), 10);
  EXPECT_THAT(spec.eval().metrics(), ElementsAre("loss", "accuracy"));
  EXPECT_EQ(spec.eval().top_k(), 5);
  EXPECT_EQ(spec.eval().best_metric(), "loss");
  EXPECT_EQ(spec.eval().best_direction(), METRIC_DIRECTION_MINIMIZE);

  EXPECT_EQ(spec.export_().strategy(), EXPORT_STRATEGY_BEST);
  EXPECT_EQ(spec.export_().export_dir(), "/tmp/m/export");
  ASSERT_TRUE(spec.export_().has_exports_to_keep());
  EXPECT_EQ(spec.export_().exports_to_keep(), 3);
}

TEST(FillJobSpecDefaultsTest, KeepsExplicitValuesEvenZeroAndInvalid) {
  const JobSpec spec = Filled(R"pb(
    name: "mine"
    mode: JOB_MODE_TRAIN
    model {
      mlp {
        hidden_units: [ 10 ]
        activation: ACTIVATION_TANH
      }
    }
    train_data {
      fashion_mnist { dir: "/data" split: DATA_SPLIT_TEST }
      batch_size: -3
      shuffle: false
    }
    optimizer { learning_rate: 0 }
    stop { stop_on_nan_loss: false }
    checkpoint { model_dir: "/m" every_steps: 50 max_to_keep: 0 max_consecutive_failures: 0 }
    eval {
      throttle_secs: 0
      metrics: [ "auc" ]
      best_metric: "auc"
      best_direction: METRIC_DIRECTION_MINIMIZE
    }
    export { strategy: EXPORT_STRATEGY_NONE export_dir: "/e" exports_to_keep: 0 }
  )pb");
  EXPECT_EQ(spec.name(), "mine");
  EXPECT_EQ(spec.mode(), JOB_MODE_TRAIN);
  EXPECT_THAT(spec.model().mlp().hidden_units(), ElementsAre(10));
  EXPECT_EQ(spec.model().mlp().activation(), ACTIVATION_TANH);
  EXPECT_EQ(spec.train_data().fashion_mnist().dir(), "/data");
  EXPECT_EQ(spec.train_data().fashion_mnist().split(), DATA_SPLIT_TEST);
  EXPECT_EQ(spec.train_data().batch_size(), -3);  // left for validation to refuse
  EXPECT_FALSE(spec.train_data().shuffle());
  EXPECT_FALSE(spec.has_eval_data());  // not created for a mode that does not use it
  EXPECT_EQ(spec.optimizer().learning_rate(), 0);
  EXPECT_FALSE(spec.stop().stop_on_nan_loss());
  EXPECT_EQ(spec.checkpoint().every_steps(), 50);
  EXPECT_EQ(spec.checkpoint().every_seconds(), 0);  // every_steps alone is a policy
  EXPECT_EQ(spec.checkpoint().max_to_keep(), 0);
  EXPECT_EQ(spec.checkpoint().max_consecutive_failures(), 0);  // never fail the job for them
  EXPECT_EQ(spec.eval().throttle_secs(), 0);
  EXPECT_THAT(spec.eval().metrics(), ElementsAre("auc"));
  EXPECT_EQ(spec.eval().best_direction(), METRIC_DIRECTION_MINIMIZE);
  EXPECT_EQ(spec.export_().strategy(), EXPORT_STRATEGY_NONE);
  EXPECT_EQ(spec.export_().export_dir(), "/e");
  EXPECT_EQ(spec.export_().exports_to_keep(), 0);
}

TEST(FillJobSpecDefaultsTest, MetricsDependOnTheModelKind) {
  EXPECT_THAT(Filled("model { linear_regression {} }").eval().metrics(),
              ElementsAre("loss", "mse"));
  EXPECT_THAT(Filled("model { logistic_regression {} }").eval().metrics(),
              ElementsAre("loss", "accuracy"));
  EXPECT_THAT(Filled("model { cnn {} }").eval().metrics(), ElementsAre("loss", "accuracy"));
  EXPECT_THAT(Filled("model { wide_and_deep {} }").eval().metrics(),
              ElementsAre("loss", "accuracy"));
  EXPECT_THAT(Filled("model { plugin { library_path: \"/m.so\" } }").eval().metrics(),
              ElementsAre("loss"));
}

TEST(FillJobSpecDefaultsTest, DirectionFollowsTheBestMetric) {
  EXPECT_EQ(
      Filled("eval { metrics: [\"accuracy\"] best_metric: \"accuracy\" }").eval().best_direction(),
      METRIC_DIRECTION_MAXIMIZE);
  EXPECT_EQ(Filled("eval { best_metric: \"mse\" }").eval().best_direction(),
            METRIC_DIRECTION_MINIMIZE);
  EXPECT_EQ(Filled("eval { best_metric: \"f1\" }").eval().best_direction(),
            METRIC_DIRECTION_UNSPECIFIED);  // validation names the metric
}

TEST(FillJobSpecDefaultsTest, ModelKindDefaults) {
  const CnnSpec cnn = Filled("model { cnn {} }").model().cnn();
  EXPECT_EQ(cnn.conv1_filters(), 32);
  EXPECT_EQ(cnn.conv2_filters(), 64);
  EXPECT_EQ(cnn.kernel_size(), 5);
  EXPECT_EQ(cnn.dense_units(), 128);

  const WideAndDeepSpec wide_and_deep =
      Filled("model { wide_and_deep {} }").model().wide_and_deep();
  EXPECT_EQ(wide_and_deep.embedding().dim(), 16);
  EXPECT_EQ(wide_and_deep.embedding().combiner(), COMBINER_SUM);
  EXPECT_EQ(wide_and_deep.embedding().admit_after(), 1);
  EXPECT_EQ(wide_and_deep.embedding().vocabulary_size(), 0);  // dynamic
  EXPECT_THAT(wide_and_deep.hidden_units(), ElementsAre(64, 32));
  EXPECT_EQ(wide_and_deep.activation(), ACTIVATION_RELU);

  // The reference's Criteo Kaggle configuration; dynamic tables.
  const DlrmSpec dlrm = Filled("model { dlrm {} }").model().dlrm();
  EXPECT_EQ(dlrm.embedding().dim(), 16);
  EXPECT_EQ(dlrm.embedding().vocabulary_size(), 0);
  EXPECT_EQ(dlrm.embedding().admit_after(), 1);
  EXPECT_THAT(dlrm.bottom_mlp(), ElementsAre(512, 256, 64, 16));
  EXPECT_THAT(dlrm.top_mlp(), ElementsAre(512, 256, 1));
  EXPECT_EQ(dlrm.num_fields(), 0);  // from the data
  EXPECT_EQ(dlrm.dense_dim(), 0);
  // The bottom MLP's default ends in the dim the spec sets; what it sets stays.
  EXPECT_THAT(Filled("model { dlrm { embedding { dim: 8 } } }").model().dlrm().bottom_mlp(),
              ElementsAre(512, 256, 64, 8));
  EXPECT_THAT(
      Filled("model { dlrm { bottom_mlp: [32, 16] top_mlp: [1] } }").model().dlrm().top_mlp(),
      ElementsAre(1));
}

TEST(FillJobSpecDefaultsTest, DataSourceDefaults) {
  const JobSpec clicks = Filled("train_data { synthetic_clicks {} }");
  EXPECT_EQ(clicks.train_data().synthetic_clicks().num_examples(), 100000);
  EXPECT_EQ(clicks.train_data().synthetic_clicks().num_fields(), 8);
  EXPECT_EQ(clicks.train_data().synthetic_clicks().vocabulary_per_field(), 1000);
  EXPECT_DOUBLE_EQ(clicks.train_data().synthetic_clicks().zipf_exponent(), 1.1);

  const JobSpec csv = Filled("train_data { csv { path: \"/d.csv\" } }");
  EXPECT_EQ(csv.train_data().csv().delimiter(), ",");
  EXPECT_EQ(csv.train_data().csv().label_column(), 0);
}

TEST(FillJobSpecDefaultsTest, OptimizerDefaults) {
  const MomentumSpec momentum = Filled("optimizer { momentum {} }").optimizer().momentum();
  EXPECT_FLOAT_EQ(momentum.momentum(), 0.9f);
  EXPECT_FALSE(momentum.nesterov());

  const AdagradSpec adagrad = Filled("optimizer { adagrad {} }").optimizer().adagrad();
  EXPECT_FLOAT_EQ(adagrad.initial_accumulator(), 0.1f);
  EXPECT_FLOAT_EQ(adagrad.epsilon(), 1e-7f);

  const AdamSpec adam = Filled("optimizer { adam {} }").optimizer().adam();
  EXPECT_FLOAT_EQ(adam.beta1(), 0.9f);
  EXPECT_FLOAT_EQ(adam.beta2(), 0.999f);
  EXPECT_FLOAT_EQ(adam.epsilon(), 1e-8f);

  const FtrlSpec ftrl = Filled("optimizer { ftrl {} }").optimizer().ftrl();
  EXPECT_FLOAT_EQ(ftrl.learning_rate_power(), -0.5f);
  EXPECT_FLOAT_EQ(ftrl.initial_accumulator(), 0.1f);
  EXPECT_EQ(ftrl.l1(), 0);
  EXPECT_EQ(ftrl.l2(), 0);

  EXPECT_FLOAT_EQ(Filled("optimizer { schedule { step { step_size: 10 } } }")
                      .optimizer()
                      .schedule()
                      .step()
                      .factor(),
                  0.1f);
  EXPECT_FLOAT_EQ(Filled("optimizer { schedule { exponential { decay_steps: 10 } } }")
                      .optimizer()
                      .schedule()
                      .exponential()
                      .rate(),
                  0.96f);
  EXPECT_EQ(Filled("optimizer { schedule { cosine { decay_steps: 10 } } }")
                .optimizer()
                .schedule()
                .cosine()
                .alpha(),
            0);
}

TEST(FillJobSpecDefaultsTest, StalenessBoundOnlyForBoundedStaleness) {
  EXPECT_EQ(Filled("training { update_mode: UPDATE_MODE_BOUNDED_STALENESS }")
                .training()
                .staleness_bound(),
            4);
  EXPECT_EQ(Filled("training { update_mode: UPDATE_MODE_SYNC }").training().staleness_bound(), 0);
}

TEST(FillJobSpecDefaultsTest, ExportDefaultsFollowModeAndModelDir) {
  EXPECT_EQ(Filled("mode: JOB_MODE_TRAIN").export_().strategy(), EXPORT_STRATEGY_FINAL);
  EXPECT_EQ(Filled("mode: JOB_MODE_CONTINUOUS_EVAL").export_().strategy(), EXPORT_STRATEGY_BEST);
  EXPECT_EQ(Filled("checkpoint { model_dir: \"/tmp/m//\" }").export_().export_dir(),
            "/tmp/m/export");
  EXPECT_EQ(Filled("checkpoint { model_dir: \"/\" }").export_().export_dir(), "/export");
  EXPECT_EQ(Filled("").export_().export_dir(), "");  // no model_dir: validation says so
}

TEST(FillJobSpecDefaultsTest, IsIdempotent) {
  JobSpec once = Filled(R"pb(
    model { wide_and_deep {} }
    train_data { synthetic_clicks {} }
    eval_data { synthetic_clicks { seed: 7 } }
    optimizer {
      ftrl {}
      schedule { step { step_size: 100 } }
    }
    training { update_mode: UPDATE_MODE_BOUNDED_STALENESS }
    checkpoint { model_dir: "/tmp/w" }
  )pb");
  JobSpec twice = once;
  FillJobSpecDefaults(&twice);
  EXPECT_EQ(once.SerializeAsString(), twice.SerializeAsString());
}

TEST(JobSpecDefaultOfTest, ReadsWhatTheFillWrites) {
  // Unset fields read as the filled spec holds them, so code handed an
  // unfilled spec acts as if it were filled.
  const JobSpec unfilled;
  const JobSpec filled = Filled(R"pb(
    train_data { synthetic_clicks {} }
    eval_data { synthetic_clicks {} }
    training { update_mode: UPDATE_MODE_BOUNDED_STALENESS }
  )pb");
  EXPECT_EQ(BatchSizeOf(unfilled.train_data()), filled.train_data().batch_size());
  EXPECT_EQ(ShuffleOf(unfilled.train_data(), PassMode::kTrain), filled.train_data().shuffle());
  EXPECT_EQ(ShuffleOf(unfilled.eval_data(), PassMode::kEval), filled.eval_data().shuffle());
  EXPECT_EQ(PrefetchBatchesOf(unfilled.train_data()), filled.train_data().prefetch_batches());
  EXPECT_EQ(UpdateModeOf(unfilled.training()), Filled("").training().update_mode());
  EXPECT_EQ(StalenessBoundOf(unfilled.training()), filled.training().staleness_bound());
  EXPECT_EQ(StepsPerLoopOf(unfilled.training()), filled.training().steps_per_loop());
  EXPECT_EQ(ComputeThreadsOf(unfilled.training()), filled.training().compute_threads());
  EXPECT_EQ(MaxToKeepOf(unfilled.checkpoint()), filled.checkpoint().max_to_keep());
  EXPECT_EQ(MaxConsecutiveFailuresOf(unfilled.checkpoint()),
            filled.checkpoint().max_consecutive_failures());
  EXPECT_EQ(StopOnNanLossOf(unfilled.stop()), filled.stop().stop_on_nan_loss());
  EXPECT_EQ(ExportsToKeepOf(unfilled.export_()), filled.export_().exports_to_keep());
  EXPECT_EQ(ExportStrategyOf(unfilled.export_(), JOB_MODE_TRAIN),
            Filled("mode: JOB_MODE_TRAIN").export_().strategy());
  EXPECT_EQ(BestMetricOf(unfilled.eval()), filled.eval().best_metric());
  EXPECT_EQ(BestDirectionOf(unfilled.eval()), filled.eval().best_direction());
  EmbeddingSpec embedding;
  EXPECT_EQ(AdmitAfterOf(embedding),
            Filled("model { wide_and_deep {} }").model().wide_and_deep().embedding().admit_after());
  EXPECT_EQ(SplitOf(DATA_SPLIT_UNSPECIFIED, PassMode::kEval), DATA_SPLIT_TEST);
  EXPECT_EQ(SplitOf(DATA_SPLIT_TRAIN, PassMode::kEval), DATA_SPLIT_TRAIN);
}

TEST(JobSpecDefaultOfTest, SetValuesWin) {
  const JobSpec spec = *ParseJobSpecText(R"pb(
    train_data { batch_size: 7 shuffle: false prefetch_batches: 3 }
    training { update_mode: UPDATE_MODE_SYNC steps_per_loop: 9 compute_threads: 2 }
    checkpoint { max_to_keep: 0 }
    stop { stop_on_nan_loss: false }
    eval { best_metric: "accuracy" }
  )pb");
  EXPECT_EQ(BatchSizeOf(spec.train_data()), 7);
  EXPECT_FALSE(ShuffleOf(spec.train_data(), PassMode::kTrain));
  EXPECT_EQ(PrefetchBatchesOf(spec.train_data()), 3);
  EXPECT_EQ(UpdateModeOf(spec.training()), UPDATE_MODE_SYNC);
  EXPECT_EQ(StepsPerLoopOf(spec.training()), 9);
  EXPECT_EQ(ComputeThreadsOf(spec.training()), 2);
  EXPECT_EQ(MaxToKeepOf(spec.checkpoint()), 0);  // 0 keeps every checkpoint
  EXPECT_FALSE(StopOnNanLossOf(spec.stop()));
  EXPECT_EQ(BestDirectionOf(spec.eval()), METRIC_DIRECTION_MAXIMIZE);
}

TEST(JobSpecDefaultOfTest, AMetricWithoutADirectionIsMinimised) {
  EvalSpec eval;
  eval.set_best_metric("my_plugin_score");
  EXPECT_EQ(BestDirectionOf(eval), METRIC_DIRECTION_MINIMIZE);
  EXPECT_TRUE(MeetsTarget(METRIC_DIRECTION_MINIMIZE, 0.2, 0.3));
  EXPECT_FALSE(MeetsTarget(METRIC_DIRECTION_MAXIMIZE, 0.2, 0.3));
  EXPECT_TRUE(MeetsTarget(METRIC_DIRECTION_MAXIMIZE, 0.3, 0.3));
}

}  // namespace
}  // namespace pstrain
