#include "common/config/job_spec_validation.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "common/config/job_spec_defaults.h"
#include "common/config/job_spec_parser.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

// A valid spec; each bad spec below starts from it.
constexpr char kBaseSpec[] = R"pb(
  name: "base"
  model { mlp { input_dim: 784 num_classes: 10 } }
  train_data { fashion_mnist {} }
  eval_data { fashion_mnist {} }
  stop { max_steps: 1000 }
  checkpoint { model_dir: "/tmp/pstrain/base" }
)pb";

struct BadSpec {
  // Top-level fields of kBaseSpec to clear first.
  std::vector<std::string> clear;
  // Text format merged into kBaseSpec: it sets singular fields, switches
  // oneof members, and appends to repeated fields.
  std::string merge;
  // The one problem expected, with its field path, rule and value.
  std::string problem;
};

const std::vector<BadSpec>& BadSpecs() {
  static const auto* const kBadSpecs = new std::vector<BadSpec>{
      // name
      {{}, R"(name: "my job!")", R"(name "my job!" must be 1 to 64 letters, digits)"},
      {{}, "name: \"" + std::string(65, 'a') + "\"", "must be 1 to 64 letters"},
      // model
      {{"model"},
       "",
       "model is required: set one of linear_regression, logistic_regression, "
       "mlp, cnn, wide_and_deep, plugin, onnx, dlrm"},
      {{},
       "model { mlp { hidden_units: [128, -5] } }",
       "model.mlp.hidden_units[1] must be > 0, got -5"},
      {{}, "model { mlp { dropout: 1 } }", "model.mlp.dropout must be in [0, 1), got 1"},
      {{},
       "model { mlp { num_classes: 1 } }",
       "model.mlp.num_classes must be 0 (from the data) or >= 2, got 1"},
      {{}, "model { mlp { input_dim: -784 } }", "model.mlp.input_dim must be >= 0, got -784"},
      {{},
       "model { logistic_regression { num_classes: 1 } }",
       "model.logistic_regression.num_classes must be 0 (from the data) or >= 2, got 1"},
      {{}, "model { cnn { kernel_size: 4 } }", "model.cnn.kernel_size must be odd and >= 1, got 4"},
      {{}, "model { cnn { conv2_filters: -64 } }", "model.cnn.conv2_filters must be > 0, got -64"},
      {{}, "model { plugin { config: \"x\" } }", "model.plugin.library_path is required"},
      {{}, "model { onnx { } }", "model.onnx.path is required"},
      {{},
       R"(model { onnx { path: "/m.onnx" dynamic_tables { admit_after: 2 } } })",
       "model.onnx.dynamic_tables[0].initializer is required"},
      {{},
       R"(model { onnx { path: "/m.onnx" dynamic_tables { initializer: "e" admit_after: -1 } } })",
       "model.onnx.dynamic_tables[0].admit_after must be >= 0, got -1"},
      {{},
       R"(model { onnx { path: "/m.onnx" inputs { dense {} } } })",
       "model.onnx.inputs[0].name is required: the graph input it binds"},
      {{},
       R"(model { onnx { path: "/m.onnx" inputs { name: "x" } } })",
       "model.onnx.inputs[0] needs the part of the batch its input takes"},
      {{},
       R"(model { onnx { path: "/m.onnx" inputs { name: "x" ids { field: -2 } } } })",
       "model.onnx.inputs[0].ids.field must be >= 0, got -2"},
      {{},
       "model { wide_and_deep {} } eval_data { synthetic_clicks {} }",
       "model.wide_and_deep needs sparse ids: train_data must be libsvm, synthetic_clicks, "
       "criteo, csv with categorical columns, or tfrecord with sparse_features, got fashion_mnist"},
      {{"eval_data"},
       R"(model { wide_and_deep { embedding { vocabulary_size: 1000 admit_after: 3 } } }
          train_data { synthetic_clicks {} } mode: JOB_MODE_TRAIN)",
       "model.wide_and_deep.embedding.admit_after is only valid for a dynamic table "
       "(vocabulary_size 0), got vocabulary_size 1000"},
      {{},
       R"(model { wide_and_deep { embedding { dim: -16 } } }
          train_data { synthetic_clicks {} } eval_data { libsvm { path: "/e.svm" } })",
       "model.wide_and_deep.embedding.dim must be > 0, got -16"},
      {{},
       R"(model { wide_and_deep { dense_dim: -13 } } train_data { synthetic_clicks {} }
          eval_data { synthetic_clicks {} })",
       "model.wide_and_deep.dense_dim must be >= 0, got -13"},
      {{},
       R"(model { dlrm { bottom_mlp: [64, 8] } } train_data { criteo { paths: "/t.tsv" } }
          eval_data { criteo { paths: "/e.tsv" } })",
       "model.dlrm.bottom_mlp's last width must be model.dlrm.embedding.dim (16), the width of "
       "the vectors it interacts with, got 8"},
      {{},
       R"(model { dlrm { top_mlp: [64, 2] } } train_data { criteo { paths: "/t.tsv" } }
          eval_data { criteo { paths: "/e.tsv" } })",
       "model.dlrm.top_mlp's last width must be 1, the logit, got 2"},
      {{},
       R"(model { dlrm { embedding { combiner: COMBINER_MEAN } } }
          train_data { criteo { paths: "/t.tsv" } } eval_data { criteo { paths: "/e.tsv" } })",
       "model.dlrm.embedding.combiner must be unset or COMBINER_SUM"},
      {{},
       R"(model { dlrm { num_fields: -26 } } train_data { criteo { paths: "/t.tsv" } }
          eval_data { criteo { paths: "/e.tsv" } })",
       "model.dlrm.num_fields must be >= 0, got -26"},
      {{},
       R"(model { dlrm {} } train_data { criteo { paths: "/t.tsv" } })",
       "model.dlrm needs sparse ids: eval_data must be libsvm, synthetic_clicks, criteo, csv "
       "with categorical columns, or tfrecord with sparse_features, got fashion_mnist"},
      {{},
       R"(model { cnn {} } train_data { csv { path: "/d.csv" } })",
       "model.cnn needs images: train_data must be fashion_mnist, got csv"},
      {{},
       R"(model { wide_and_deep {} } train_data { csv { path: "/d.csv" } }
          eval_data { csv { path: "/e.csv" categorical: "city" } })",
       "model.wide_and_deep needs sparse ids: train_data must be libsvm, synthetic_clicks, "
       "criteo, csv with categorical columns, or tfrecord with sparse_features, got csv"},
      // data
      {{"train_data"}, "", "train_data is required for mode TRAIN_AND_EVAL"},
      {{"train_data"},
       R"(train_data { csv { path: "/d.csv" label: "y" features: ["a", "a"] } })",
       "train_data.csv.features names column \"a\" twice"},
      {{"train_data"},
       R"(train_data { csv { path: "/d.csv" label: "y" categorical: "y" } })",
       "train_data.csv.column \"y\" is named both in label and in categorical"},
      {{"train_data"},
       R"(train_data { csv { path: "/d.csv" label: "y" fill_missing { column: "y" value: 1 } } })",
       "train_data.csv.fill_missing[0] names \"y\", the label, not a feature column"},
      {{"train_data"},
       R"(train_data { csv { path: "/d.csv" fill_missing { value: 2 } } })",
       "train_data.csv.fill_missing[0].column is required (a feature column's name, or \"*\")"},
      {{"train_data"},
       R"(train_data { csv { path: "/d.csv" standardize: true } read_mode: READ_MODE_STREAMED })",
       "train_data.csv.standardize needs the data in memory"},
      {{"eval_data"}, "", "eval_data is required for mode TRAIN_AND_EVAL"},
      {{"train_data"},
       "train_data { batch_size: 32 }",
       "train_data needs a source: set one of fashion_mnist, csv, libsvm, synthetic_clicks, "
       "tfrecord, criteo"},
      {{}, "eval_data { criteo {} }", "eval_data.criteo.paths needs a file"},
      {{},
       R"(eval_data { criteo { paths: "/day_0.tsv" hash_buckets: -1 } })",
       "eval_data.criteo.hash_buckets must be > 0, got -1"},
      {{},
       R"(eval_data { tfrecord { dense_features: "x" label: "y" } })",
       "eval_data.tfrecord.paths needs a file"},
      {{},
       R"(eval_data { tfrecord { paths: "/d.tfrecord" label: "y" } })",
       "eval_data.tfrecord.dense_features and eval_data.tfrecord.sparse_features are both empty"},
      {{},
       R"(eval_data { tfrecord { paths: "/d.tfrecord" dense_features: "x" } })",
       "eval_data.tfrecord.label is required"},
      {{},
       R"(eval_data { tfrecord { paths: "/d.tfrecord" dense_features: "x" label: "y"
                                 hash_buckets: -5 } })",
       "eval_data.tfrecord.hash_buckets must be > 0, got -5"},
      {{},
       R"(eval_data { tfrecord { paths: "/d.tfrecord" dense_features: "x" sparse_features: "x"
                                 label: "y" } })",
       R"(eval_data.tfrecord names feature "x" twice)"},
      {{},
       R"(eval_data { tfrecord { paths: "/d.tfrecord" dense_features: "y" label: "y" } })",
       R"(eval_data.tfrecord reads feature "y" as the label and as an input)"},
      {{},
       R"(eval_data { tfrecord { paths: "/d.tfrecord" dense_features: "x" label: "y"
                                 compression: 7 } })",
       "eval_data.tfrecord.compression has an unknown value 7"},
      {{}, "train_data { batch_size: -1 }", "train_data.batch_size must be > 0, got -1"},
      {{}, "eval_data { epochs: -2 }", "eval_data.epochs must be >= 0, got -2"},
      {{},
       "train_data { prefetch_batches: -1 }",
       "train_data.prefetch_batches must be >= 0, got -1"},
      {{},
       R"(train_data { csv { path: "/d.csv" delimiter: ";;" } })",
       R"(train_data.csv.delimiter must be one character, got ";;")"},
      {{},
       R"(train_data { csv { path: "/d.csv" label_column: -1 } })",
       "train_data.csv.label_column must be >= 0, got -1"},
      {{}, "train_data { csv { has_header: true } }", "train_data.csv.path is required"},
      {{}, "eval_data { libsvm { num_features: 10 } }", "eval_data.libsvm.path is required"},
      {{},
       R"(train_data { fashion_mnist { dir: "" } } eval_data { synthetic_clicks { zipf_exponent: 0.9 } })",
       "eval_data.synthetic_clicks.zipf_exponent must be > 1, got 0.9"},
      {{},
       "train_data { synthetic_clicks { num_fields: -8 } }",
       "train_data.synthetic_clicks.num_fields must be > 0, got -8"},
      {{},
       "train_data { synthetic_clicks { dense_features: -3 } }",
       "train_data.synthetic_clicks.dense_features must be in [0, 100000], got -3"},
      // optimizer
      {{}, "optimizer { learning_rate: -1 }", "optimizer.learning_rate must be > 0, got -1"},
      {{}, "optimizer { learning_rate: 0 }", "optimizer.learning_rate must be > 0, got 0"},
      {{}, "optimizer { learning_rate: nan }", "optimizer.learning_rate must be > 0, got nan"},
      {{},
       "optimizer { momentum { momentum: 1.5 } }",
       "optimizer.momentum.momentum must be in [0, 1), got 1.5"},
      {{},
       "optimizer { adagrad { initial_accumulator: 0 } }",
       "optimizer.adagrad.initial_accumulator must be > 0, got 0"},
      {{}, "optimizer { adam { beta2: 1 } }", "optimizer.adam.beta2 must be in [0, 1), got 1"},
      {{}, "optimizer { adam { epsilon: 0 } }", "optimizer.adam.epsilon must be > 0, got 0"},
      {{},
       "optimizer { ftrl { learning_rate_power: 0.5 } }",
       "optimizer.ftrl.learning_rate_power must be <= 0, got 0.5"},
      {{}, "optimizer { ftrl { l2: -0.25 } }", "optimizer.ftrl.l2 must be >= 0, got -0.25"},
      {{}, "optimizer { clip_norm: -1 }", "optimizer.clip_norm must be >= 0, got -1"},
      {{},
       "optimizer { schedule { step { factor: 0.5 } } }",
       "optimizer.schedule.step.step_size must be > 0, got 0"},
      {{},
       "optimizer { schedule { step { step_size: 10 factor: 1.5 } } }",
       "optimizer.schedule.step.factor must be in (0, 1], got 1.5"},
      {{},
       "optimizer { schedule { exponential { decay_steps: 0 } } }",
       "optimizer.schedule.exponential.decay_steps must be > 0, got 0"},
      {{},
       "optimizer { schedule { exponential { decay_steps: 10 rate: -0.9 } } }",
       "optimizer.schedule.exponential.rate must be in (0, 1], got -0.9"},
      {{},
       "optimizer { schedule { cosine { decay_steps: 100 alpha: 2 } } }",
       "optimizer.schedule.cosine.alpha must be in [0, 1], got 2"},
      {{},
       "optimizer { schedule { warmup_steps: -1 } }",
       "optimizer.schedule.warmup_steps must be >= 0, got -1"},
      // training
      {{},
       "training { replicas_to_aggregate: 2 }",
       "training.replicas_to_aggregate is only valid with update_mode SYNC, got update_mode "
       "ASYNC"},
      {{},
       "training { update_mode: UPDATE_MODE_SYNC replicas_to_aggregate: -2 }",
       "training.replicas_to_aggregate must be >= 0, got -2"},
      {{},
       "training { update_mode: UPDATE_MODE_BOUNDED_STALENESS staleness_bound: -1 }",
       "training.staleness_bound must be >= 1, got -1"},
      {{},
       "training { update_mode: UPDATE_MODE_SYNC staleness_bound: 3 }",
       "training.staleness_bound is only valid with update_mode BOUNDED_STALENESS, got "
       "update_mode SYNC"},
      {{}, "training { steps_per_loop: -100 }", "training.steps_per_loop must be > 0, got -100"},
      {{}, "training { compute_threads: -1 }", "training.compute_threads must be > 0, got -1"},
      // stop
      {{"stop"}, "", "stop: a training job needs max_steps, max_seconds or train_data.epochs"},
      {{}, "stop { max_steps: -5 }", "stop.max_steps must be >= 0, got -5"},
      {{}, "stop { max_seconds: -1 }", "stop.max_seconds must be >= 0, got -1"},
      {{},
       "stop { early_stopping_patience: -1 }",
       "stop.early_stopping_patience must be >= 0, got -1"},
      {{}, "stop { min_delta: -0.5 }", "stop.min_delta must be >= 0, got -0.5"},
      {{},
       "stop { target_metric_value: inf }",
       "stop.target_metric_value must be a finite number, got inf"},
      {{"eval_data"},
       "mode: JOB_MODE_TRAIN stop { early_stopping_patience: 3 }",
       "stop.early_stopping_patience is only valid with mode TRAIN_AND_EVAL, got mode TRAIN"},
      {{},
       "mode: JOB_MODE_CONTINUOUS_EVAL stop { target_metric_value: 0.9 }",
       "stop.target_metric_value is only valid with mode TRAIN_AND_EVAL, got mode "
       "CONTINUOUS_EVAL"},
      // checkpoint
      {{"checkpoint"}, "", "checkpoint.model_dir is required"},
      {{},
       R"(checkpoint { model_dir: "/tmp/../etc/m" })",
       R"(checkpoint.model_dir must not contain "..", got "/tmp/../etc/m")"},
      {{}, "checkpoint { every_steps: -100 }", "checkpoint.every_steps must be >= 0, got -100"},
      {{},
       "checkpoint { every_seconds: -1 every_steps: 10 }",
       "checkpoint.every_seconds must be >= 0, got -1"},
      {{}, "checkpoint { max_to_keep: -1 }", "checkpoint.max_to_keep must be >= 0, got -1"},
      {{},
       "checkpoint { max_consecutive_failures: -2 }",
       "checkpoint.max_consecutive_failures must be >= 0, got -2"},
      {{},
       R"(checkpoint { warm_start_from: "../other/ckpt-100" })",
       R"(checkpoint.warm_start_from must not contain "..")"},
      // eval
      {{},
       R"(eval { best_metric: "f1" })",
       R"(eval.best_metric "f1" must be one of eval.metrics [loss, accuracy])"},
      {{},
       R"(eval { metrics: ["loss", "f1"] })",
       R"(eval.metrics[1] "f1" is not a known metric: loss, accuracy, top_k_accuracy, auc, )"
       "precision, recall, mse"},
      {{}, R"(eval { metrics: ["loss", "loss"] })", R"(eval.metrics[1] "loss" is listed twice)"},
      {{}, "eval { top_k: -1 }", "eval.top_k must be > 0, got -1"},
      {{}, "eval { throttle_secs: -1 }", "eval.throttle_secs must be >= 0, got -1"},
      {{}, "eval { start_delay_secs: -30 }", "eval.start_delay_secs must be >= 0, got -30"},
      {{}, "eval { steps: -1 }", "eval.steps must be >= 0, got -1"},
      // export
      {{"eval_data"},
       "mode: JOB_MODE_TRAIN export { strategy: EXPORT_STRATEGY_BEST }",
       "export.strategy BEST needs a mode that evaluates (to rank checkpoints), got mode TRAIN"},
      {{},
       R"(export { export_dir: "/tmp/pstrain/../../etc" })",
       R"(export.export_dir must not contain "..")"},
      {{}, "export { exports_to_keep: -3 }", "export.exports_to_keep must be >= 0, got -3"},
  };
  return *kBadSpecs;
}

absl::Status CheckBadSpec(const BadSpec& bad) {
  absl::StatusOr<JobSpec> spec = ParseJobSpecText(kBaseSpec);
  EXPECT_TRUE(spec.ok()) << spec.status();
  for (const std::string& field : bad.clear) {
    const google::protobuf::FieldDescriptor* descriptor =
        JobSpec::descriptor()->FindFieldByName(field);
    EXPECT_NE(descriptor, nullptr) << field;
    spec->GetReflection()->ClearField(&*spec, descriptor);
  }
  EXPECT_TRUE(google::protobuf::TextFormat::MergeFromString(bad.merge, &*spec)) << bad.merge;
  FillJobSpecDefaults(&*spec);
  return ValidateJobSpec(*spec);
}

TEST(ValidateJobSpecTest, BaseSpecIsValid) {
  EXPECT_TRUE(CheckBadSpec(BadSpec{}).ok()) << CheckBadSpec(BadSpec{});
}

TEST(ValidateJobSpecTest, RefusesEachBadSpecNamingFieldRuleAndValue) {
  ASSERT_GE(BadSpecs().size(), 25);
  for (const BadSpec& bad : BadSpecs()) {
    SCOPED_TRACE(bad.merge);
    absl::Status status = CheckBadSpec(bad);
    ASSERT_FALSE(status.ok()) << bad.problem;
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    // Exactly the one problem: each bad spec breaks one rule.
    std::vector<std::string> problems = absl::StrSplit(status.message(), "; ");
    EXPECT_EQ(problems.size(), 1) << status.message();
    EXPECT_THAT(std::string(status.message()), HasSubstr(bad.problem));
  }
}

TEST(ValidateJobSpecTest, ReportsEveryProblemInFieldOrder) {
  absl::StatusOr<JobSpec> spec = ParseJobSpecText(R"pb(
    name: "two problems"
    model { mlp {} }
    train_data { fashion_mnist {} }
    eval_data { fashion_mnist {} }
    optimizer { learning_rate: -1 }
    stop { max_steps: 10 }
  )pb");
  ASSERT_TRUE(spec.ok()) << spec.status();
  FillJobSpecDefaults(&*spec);
  absl::Status status = ValidateJobSpec(*spec);
  EXPECT_EQ(std::string(status.message()),
            "name \"two problems\" must be 1 to 64 letters, digits, '-', '_' or '.'; "
            "optimizer.learning_rate must be > 0, got -1; checkpoint.model_dir is required");
}

TEST(ValidateJobSpecTest, RefusesZeroesThatDefaultsWouldHaveFilled) {
  absl::StatusOr<JobSpec> spec = ParseJobSpecText(kBaseSpec);
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::Status status = ValidateJobSpec(*spec);  // FillJobSpecDefaults not called
  EXPECT_THAT(std::string(status.message()), HasSubstr("train_data.batch_size must be > 0, got 0"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("optimizer.learning_rate must be > 0, got 0"));
}

TEST(ValidateJobSpecTest, RefusesEnumValuesThisBuildDoesNotKnow) {
  absl::StatusOr<JobSpec> spec = ParseJobSpecText(kBaseSpec);
  ASSERT_TRUE(spec.ok()) << spec.status();
  FillJobSpecDefaults(&*spec);
  // As a newer client could send them over gRPC.
  spec->set_mode(static_cast<JobMode>(42));
  spec->mutable_training()->set_update_mode(static_cast<UpdateMode>(9));
  spec->mutable_model()->mutable_mlp()->set_activation(static_cast<Activation>(7));
  absl::Status status = ValidateJobSpec(*spec);
  EXPECT_THAT(std::string(status.message()), HasSubstr("mode has an unknown value 42"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("training.update_mode has an unknown value 9"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("model.mlp.activation has an unknown value 7"));
}

}  // namespace
}  // namespace pstrain
