// Serving parity: every built-in model, the example plug-in and an imported
// PyTorch graph, trained on real data and exported, gives in ONNX Runtime
// what pstrain predict gives from the same export on the same inputs (the
// Fashion-MNIST test set; click logs of the synthetic-clicks test split,
// written as libsvm; Criteo-format logs of the generator's test split):
// every output within 1e-5 absolute or 1e-5 relative,
// the same accuracy, the same AUC.
// pstrain predict's side runs its own code: LoadExportedModel,
// LoadPredictionInput and PredictAll, as `pstrain predict` calls them.

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/predict/batch_prediction.h"
#include "client/predict/prediction_input.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_defaults.h"
#include "common/config/job_spec_parser.h"
#include "common/data/criteo_logs.h"
#include "common/data/synthetic_clicks.h"
#include "common/data/test_files.h"
#include "common/evaluation/eval_metrics.h"
#include "common/export/export_manifest.h"
#include "common/export/export_writer.h"
#include "common/export/exported_model.h"
#include "common/export/testing/trained_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/onnx/onnx_runtime.h"

namespace pstrain {
namespace {

constexpr char kFashionMnist[] = "/usr/share/datasets/fashion-mnist";
constexpr double kTolerance = 1e-5;
// Reordering two scores within kTolerance moves an AUC by about
// 1 / (positives * negatives); far below this.
constexpr double kAucTolerance = 1e-6;
constexpr char kTanhNetPlugin[] = "examples/plugin_model/libtanh_net_model.so";
// A PyTorch MLP exported by torch.onnx.export, trained as an imported model
// and exported back.
constexpr char kPyTorchMlp[] = "common/model/onnx/testdata/mlp.onnx";
// A PyTorch click model over ids, its nn.Embedding a table of 8000 rows.
constexpr char kPyTorchClicks[] = "common/model/onnx/testdata/clicks.onnx";
// A DLRM at Criteo's sizes: inputs dense_x [batch, 13] and ids [batch, 26].
constexpr char kPyTorchDlrm[] = "examples/onnx/dlrm.onnx";

// Click logs with 8 fields of 500 ids each: their test split holds ids the
// training split never shows, which a dynamic table serves as zero rows.
SyntheticClicksSource Clicks(int64_t examples) {
  SyntheticClicksSource clicks;
  clicks.set_num_examples(examples);
  clicks.set_num_fields(8);
  clicks.set_vocabulary_per_field(500);
  clicks.set_seed(11);
  FillSyntheticClicksDefaults(&clicks);
  return clicks;
}

std::string ClicksText(int64_t examples) {
  return absl::StrCat("synthetic_clicks { num_examples: ", examples,
                      " num_fields: 8 vocabulary_per_field: 500 seed: 11 }");
}

// The clicks of one split as libsvm lines "label id:1 ...", ids zero-based.
// `ragged` drops a field from every third example and two from every
// seventh, for models whose examples have any number of ids.
std::string WriteClicksLibsvm(int64_t examples, bool test, bool ragged) {
  auto source = SyntheticClicks::Create(Clicks(examples), test);
  EXPECT_TRUE(source.ok()) << source.status();
  std::vector<int64_t> all((*source)->num_examples());
  for (int64_t i = 0; i < static_cast<int64_t>(all.size()); ++i) all[i] = i;
  ExampleBatch batch;
  EXPECT_TRUE((*source)->Fill(all, &batch).ok());
  std::string lines;
  for (int64_t i = 0; i < batch.size; ++i) {
    absl::StrAppend(&lines, batch.labels[i]);
    for (int64_t e = batch.row_splits[i]; e < batch.row_splits[i + 1]; ++e) {
      const int64_t field = e - batch.row_splits[i];
      if (ragged && ((i % 3 == 0 && field == 2) || (i % 7 == 0 && field >= 6))) continue;
      absl::StrAppend(&lines, " ", batch.sparse_ids[e], ":1");
    }
    absl::StrAppend(&lines, "\n");
  }
  return testing_util::WriteTestFile(
      absl::StrCat("clicks_", test ? "test" : "train", ragged ? "_ragged" : "", ".libsvm"), lines);
}

// Criteo-format logs of `examples` lines from the generator's true model;
// their path.
std::string WriteCriteo(int64_t examples, bool test) {
  CriteoLogsOptions options;
  options.num_examples = examples;
  options.test_split = test;
  options.vocabulary_per_field = 200;
  const std::string path =
      JoinPath(::testing::TempDir(), absl::StrCat("criteo_", test ? "test" : "train", ".tsv"));
  PosixEnv env;
  const absl::Status written = WriteCriteoLogs(env, path, options);
  EXPECT_TRUE(written.ok()) << written;
  return path;
}

enum class TestInput { kFashionMnist, kClicks, kRaggedClicks, kCriteo };

struct ServingCase {
  std::string name;
  std::string model;
  std::string train_data;  // a DataSpec source
  std::string optimizer;
  int64_t steps = 200;
  TestInput input = TestInput::kFashionMnist;
  // Weights model.onnx may hold; the rest go to model.onnx.data.
  int64_t max_inline_bytes = OnnxExportOptions().max_inline_bytes;
  // A Node script of examples/ that serves the export on the Fashion-MNIST
  // test set and prints its accuracy.
  std::string serving_example;
  // An imported graph of several inputs keeps its own: each of its inputs
  // and the feed of OnnxInputs it takes ("dense", "sparse_ids").
  std::map<std::string, std::string> graph_inputs;
};

std::string FashionMnistTrain() {
  return absl::StrCat("fashion_mnist { dir: \"", kFashionMnist, "\" }");
}

std::vector<ServingCase> Cases() {
  const std::string adam = "adam {} learning_rate: 0.002";
  const std::string adagrad = "adagrad {} learning_rate: 0.1";
  const std::string ragged_train =
      absl::StrCat("libsvm { path: \"", WriteClicksLibsvm(20000, false, true),
                   "\" num_features: 4000 zero_based: true }");
  return {
      {"linear_regression", "linear_regression {}", FashionMnistTrain(),
       "sgd {} learning_rate: 0.0001"},
      {"multinomial_logistic_regression", "logistic_regression { num_classes: 0 }",
       FashionMnistTrain(), adam},
      {"mlp", "mlp { num_classes: 0 hidden_units: [64, 32] }", FashionMnistTrain(), adam, 200,
       TestInput::kFashionMnist, OnnxExportOptions().max_inline_bytes,
       "examples/onnx/serve_fashion_mnist.js"},
      {"mlp_gelu_external_data",
       "mlp { num_classes: 0 hidden_units: [32] activation: ACTIVATION_GELU }", FashionMnistTrain(),
       adam, 200, TestInput::kFashionMnist, 64 << 10},
      {"cnn", "cnn { conv1_filters: 8 conv2_filters: 16 kernel_size: 5 dense_units: 32 }",
       FashionMnistTrain(), adam, 150},
      {"tanh_net_plugin",
       absl::StrCat("plugin { library_path: \"", kTanhNetPlugin,
                    "\" config: \"input_dim=784 hidden=32 classes=10\" }"),
       FashionMnistTrain(), adam},
      {"onnx_import_pytorch_mlp", absl::StrCat("onnx { path: \"", kPyTorchMlp, "\" }"),
       FashionMnistTrain(), adam},
      {"sparse_logistic_regression", "logistic_regression {}",
       absl::StrCat("libsvm { path: \"", WriteClicksLibsvm(20000, false, false),
                    "\" num_features: 4000 zero_based: true }"),
       adagrad, 300, TestInput::kClicks},
      {"onnx_import_pytorch_clicks", absl::StrCat("onnx { path: \"", kPyTorchClicks, "\" }"),
       ClicksText(20000), adam, 300, TestInput::kClicks},
      {"onnx_import_pytorch_clicks_dynamic",
       absl::StrCat("onnx { path: \"", kPyTorchClicks,
                    "\" dynamic_tables { initializer: \"embedding.weight\" } }"),
       ClicksText(20000), adam, 300, TestInput::kClicks},
      {"wide_and_deep", "wide_and_deep { embedding { vocabulary_size: 4000 dim: 8 } }",
       ClicksText(20000), adagrad, 300, TestInput::kClicks},
      {"wide_and_deep_dynamic_mean",
       "wide_and_deep { embedding { dim: 8 combiner: COMBINER_MEAN } "
       "num_fields: 0 }",
       ragged_train, adagrad, 300, TestInput::kRaggedClicks},
      // Criteo's 13 counts beside the embeddings: the graph's two inputs.
      {"wide_and_deep_criteo", "wide_and_deep { embedding { dim: 8 } }",
       absl::StrCat("criteo { paths: \"", WriteCriteo(20000, false), "\" }"), adagrad, 300,
       TestInput::kCriteo},
      // A table per field, the dot interaction in ONNX nodes.
      {"dlrm_criteo", "dlrm { embedding { dim: 8 } bottom_mlp: [32, 8] top_mlp: [32, 1] }",
       absl::StrCat("criteo { paths: \"", WriteCriteo(20000, false), "\" }"), adagrad, 300,
       TestInput::kCriteo},
      // PyTorch's DLRM, its tables dynamic: the export keeps its inputs.
      {"onnx_import_pytorch_dlrm_criteo",
       absl::StrCat("onnx { path: \"", kPyTorchDlrm,
                    "\" dynamic_tables { initializer: \"tables.*.weight\" } }"),
       absl::StrCat("criteo { paths: \"", WriteCriteo(20000, false), "\" }"),
       adam,
       200,
       TestInput::kCriteo,
       OnnxExportOptions().max_inline_bytes,
       "",
       {{"dense_x", "dense"}, {"ids", "sparse_ids"}}},
  };
}

JobSpec SpecOf(const ServingCase& c) {
  auto raw = ParseJobSpecText(absl::StrCat("model { ", c.model, " } train_data { ", c.train_data,
                                           " batch_size: 64 } eval_data { ", c.train_data,
                                           " batch_size: 64 } optimizer { ", c.optimizer,
                                           " } training { seed: 3 } stop { max_steps: ", c.steps,
                                           " } checkpoint { model_dir: \"/tmp/unused\" }"));
  EXPECT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

absl::StatusOr<PredictionInput> LoadTestInput(TestInput input, const DatasetInfo& model_info) {
  PredictionInputOptions options;
  std::string path;
  if (input == TestInput::kFashionMnist) {
    options.format = DataSpec::kFashionMnist;
    path = JoinPath(kFashionMnist, "t10k-images-idx3-ubyte.gz");
    options.labels_path = JoinPath(kFashionMnist, "t10k-labels-idx1-ubyte.gz");
  } else if (input == TestInput::kCriteo) {
    options.format = DataSpec::kCriteo;
    path = WriteCriteo(5000, true);
  } else {
    options.format = DataSpec::kLibsvm;
    options.zero_based = true;
    path = WriteClicksLibsvm(10000, true, input == TestInput::kRaggedClicks);
  }
  return LoadPredictionInput(path, options, model_info);
}

// The graph inputs for every example of `batch`: dense features, or sparse
// ids and values padded to the longest example with (id 0, value 0).
std::map<std::string, OnnxTensor> OnnxInputs(const ExampleBatch& batch) {
  std::map<std::string, OnnxTensor> inputs;
  if (batch.dense_dim() > 0) {
    const float* dense = batch.dense.data<float>();
    inputs["dense"] = OnnxTensor::Float({batch.size, batch.dense_dim()},
                                        {dense, dense + batch.size * batch.dense_dim()});
  }
  if (batch.has_sparse()) {
    int64_t width = 1;
    for (int64_t i = 0; i < batch.size; ++i) {
      width = std::max(width, batch.row_splits[i + 1] - batch.row_splits[i]);
    }
    std::vector<int64_t> ids(batch.size * width, 0);
    std::vector<float> values(batch.size * width, 0.0f);
    for (int64_t i = 0; i < batch.size; ++i) {
      for (int64_t e = batch.row_splits[i]; e < batch.row_splits[i + 1]; ++e) {
        const int64_t at = i * width + (e - batch.row_splits[i]);
        ids[at] = batch.sparse_ids[e];
        values[at] = batch.sparse_values.empty() ? 1.0f : batch.sparse_values[e];
      }
    }
    inputs["sparse_ids"] = OnnxTensor::Int64({batch.size, width}, std::move(ids));
    inputs["sparse_values"] = OnnxTensor::Float({batch.size, width}, std::move(values));
  }
  return inputs;
}

std::map<std::string, double> MetricsOf(const ExportedModel& model,
                                        const std::vector<float>& predictions,
                                        const std::vector<float>& labels) {
  EvalMetricsOptions options;
  options.kind = model.prediction_kind();
  options.width = model.prediction_width();
  options.metrics = model.prediction_kind() == PredictionKind::kRegression
                        ? std::vector<std::string>{"mse"}
                        : std::vector<std::string>{"accuracy", "auc"};
  auto metrics = EvalMetrics::Create(options);
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_TRUE(metrics->Add(predictions, labels, {}).ok());
  return metrics->Results();
}

// Ids of the batch that the export's dynamic tables do not hold.
int64_t UnknownIds(ExportedModel& model, const ExampleBatch& batch) {
  int64_t unknown = 0;
  for (const VariableDef& def : model.parameters().definitions()) {
    const EmbeddingTableValues* table = model.parameters().table(def.spec.name());
    if (table == nullptr || table->vocabulary() > 0) continue;
    for (int64_t id : batch.sparse_ids) unknown += table->Find(id) == nullptr;
  }
  return unknown;
}

// Every example's predictions, [examples, width], a thousand at a time.
absl::StatusOr<std::vector<float>> PredictInChunks(ExportedModel& model,
                                                   const ExampleSource& source) {
  std::vector<float> predictions;
  ExampleBatch chunk;
  for (int64_t begin = 0; begin < source.num_examples(); begin += 1000) {
    std::vector<int64_t> indices;
    for (int64_t i = begin; i < std::min(begin + 1000, source.num_examples()); ++i) {
      indices.push_back(i);
    }
    absl::Status filled = source.Fill(indices, &chunk);
    if (!filled.ok()) return filled;
    absl::StatusOr<std::vector<float>> predicted = model.Predict(chunk);
    if (!predicted.ok()) return predicted.status();
    predictions.insert(predictions.end(), predicted->begin(), predicted->end());
  }
  return predictions;
}

class ServingParityTest : public ::testing::TestWithParam<ServingCase> {};

TEST_P(ServingParityTest, OnnxRuntimeGivesPstrainPredictsResults) {
  const ServingCase& c = GetParam();
  const JobSpec spec = SpecOf(c);
  testing_util::TrainedModel trained = testing_util::TrainModel(spec, c.steps);
  PosixEnv env;
  const std::string dir = JoinPath(::testing::TempDir(), absl::StrCat("export_", c.name));
  if (*PathExists(env, dir)) {
    ASSERT_TRUE(RemoveTree(env, dir).ok());
  }
  OnnxExportOptions onnx;
  onnx.max_inline_bytes = c.max_inline_bytes;
  auto manifest = WriteExport(env, dir, testing_util::ExportSourceOf(trained, spec, c.steps),
                              trained.trainer->model(), *trained.parameters, onnx);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  ASSERT_TRUE(manifest->has_onnx_model()) << manifest->onnx_omitted();
  EXPECT_EQ(manifest->has_onnx_data(), c.max_inline_bytes < (1 << 20));

  // pstrain predict's side.
  auto model = LoadExportedModel(dir);
  ASSERT_TRUE(model.ok()) << model.status();
  auto input = LoadTestInput(c.input, (*model)->dataset());
  ASSERT_TRUE(input.ok()) << input.status();
  auto summary = PredictAll(**model, *input->source, /*has_labels=*/true, 256, nullptr);
  ASSERT_TRUE(summary.ok()) << summary.status();
  std::vector<int64_t> all(input->source->num_examples());
  for (int64_t i = 0; i < static_cast<int64_t>(all.size()); ++i) all[i] = i;
  ExampleBatch batch;
  ASSERT_TRUE(input->source->Fill(all, &batch).ok());
  auto predicted = PredictInChunks(**model, *input->source);
  ASSERT_TRUE(predicted.ok()) << predicted.status();
  if (c.input == TestInput::kRaggedClicks) {
    EXPECT_GT(UnknownIds(**model, batch), 0);  // the zero rows are read
  }

  // ONNX Runtime's side.
  std::map<std::string, OnnxTensor> feeds = OnnxInputs(batch);
  if (!c.graph_inputs.empty()) {
    std::map<std::string, OnnxTensor> renamed;
    for (const auto& [name, feed] : c.graph_inputs) renamed[name] = feeds.at(feed);
    feeds = std::move(renamed);
  }
  auto outputs = RunInOnnxRuntime(JoinPath(dir, kExportOnnxFileName), feeds);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  const OnnxTensor& served = outputs->at("predictions");
  ASSERT_EQ(served.dims, (std::vector<int64_t>{batch.size, (*model)->prediction_width()}));
  ASSERT_EQ(served.floats.size(), predicted->size());
  int64_t outside = 0;
  double worst = 0;
  for (size_t i = 0; i < predicted->size(); ++i) {
    const double expected = (*predicted)[i], got = served.floats[i];
    const double difference = std::abs(got - expected);
    worst = std::max(worst, difference);
    if (difference > kTolerance && difference > kTolerance * std::abs(expected)) ++outside;
  }
  EXPECT_EQ(outside, 0) << "of " << predicted->size() << " outputs; largest difference " << worst;

  const std::map<std::string, double> ours = MetricsOf(**model, *predicted, batch.labels);
  const std::map<std::string, double> theirs = MetricsOf(**model, served.floats, batch.labels);
  for (const auto& [name, value] : ours) {
    const double allowed = name == "auc" ? kAucTolerance : name == "mse" ? kTolerance : 0.0;
    EXPECT_NEAR(theirs.at(name), value, allowed) << name;
  }
  if (summary->metrics.count("accuracy") > 0) {
    EXPECT_EQ(theirs.at("accuracy"), summary->metrics.at("accuracy"));
  }
  if (!c.serving_example.empty()) {
    auto printed =
        RunNodeScript(c.serving_example, {JoinPath(dir, kExportOnnxFileName), kFashionMnist});
    ASSERT_TRUE(printed.ok()) << printed.status();
    EXPECT_THAT(*printed, ::testing::HasSubstr(
                              absl::StrFormat("accuracy %.4f", summary->metrics.at("accuracy"))));
  }
  std::cout << c.name << ": " << batch.size << " examples, pstrain predict "
            << FormatSummary(*summary) << ", ONNX Runtime";
  for (const auto& [name, value] : theirs) std::cout << " " << name << " " << value;
  std::cout << ", largest difference " << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(Models, ServingParityTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace pstrain
