// Imported PyTorch models as a job's model: the MLP (testdata/mlp.onnx)
// and the click model over ids (testdata/clicks.onnx), their variables,
// training in one process on real Fashion-MNIST and on click logs, and the
// errors a job spec meets at submit.

#include "common/model/onnx/onnx_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/model_factory.h"
#include "common/model/model_gradient_check.h"
#include "common/model/onnx/testdata/pytorch_reference.h"
#include "common/tensor/tensor.h"
#include "common/training/local_trainer.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr char kMlp[] = "common/model/onnx/testdata/mlp.onnx";
constexpr char kClicks[] = "common/model/onnx/testdata/clicks.onnx";
// dense_x [batch, 13] and ids [batch, 4]: a table per field, dot interactions.
constexpr char kDlrm[] = "common/model/onnx/testdata/dlrm.onnx";
// dense_x [batch, 3], ids [batch, 5] into two tables of 20 rows, weights
// [batch, 5] and counts [batch, 1]: a weighted sum bag, a mean bag and a
// plain mean over the ids.
constexpr char kMultiHot[] = "common/model/onnx/testdata/multi_hot.onnx";

constexpr char kFashionMnist[] =
    "train_data { fashion_mnist {} batch_size: 64 } eval_data { fashion_mnist {} batch_size: 1000 "
    "}";
// What clicks.onnx takes: 8 fields of 1000 ids.
constexpr char kClickLogs[] =
    "train_data { synthetic_clicks { num_examples: 20000 seed: 3 } batch_size: 128 } eval_data { "
    "synthetic_clicks { num_examples: 5000 seed: 3 } batch_size: 1000 } eval { metrics: [ "
    "\"auc\", \"loss\" ] }";

JobSpec Spec(const std::string& model, int64_t steps, const std::string& data = kFashionMnist) {
  auto raw = ParseJobSpecText(absl::StrCat(
      "model { ", model, " } ", data,
      " optimizer { adam {} learning_rate: 0.002 } training { seed: 2 } stop { max_steps: ", steps,
      " } checkpoint { model_dir: \"/tmp/unused\" }"));
  EXPECT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

OnnxModelSpec Graph(const std::string& path) {
  OnnxModelSpec spec;
  spec.set_path(path);
  return spec;
}

// Fashion-MNIST's 784 features of 10 classes.
DatasetInfo FashionMnistInfo() {
  DatasetInfo info;
  info.dense_dim = 784;
  info.num_classes = 10;
  return info;
}

// Synthetic click logs' 8 fields of 1000 ids (ids below 8000), clicked or
// not.
DatasetInfo ClickLogsInfo() {
  DatasetInfo info;
  info.sparse_dim = 8000;
  info.num_fields = 8;
  info.num_classes = 2;
  return info;
}

// A oneDNN context for models built directly.
class OnnxModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compute = ComputeContext::Create({});
    ASSERT_TRUE(compute.ok()) << compute.status();
    compute_ = std::move(compute).value();
    context_ = ModelContext{compute_.get(), 5};
  }

  // The model `spec` imports, for data like `info`; null on an error.
  std::unique_ptr<OnnxModel> Create(const OnnxModelSpec& spec, const DatasetInfo& info) {
    auto model = OnnxModel::Create(spec, info, context_);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? *std::move(model) : nullptr;
  }
  // The PyTorch MLP for Fashion-MNIST, and the click model for click logs.
  std::unique_ptr<OnnxModel> CreateMlp() { return Create(Graph(kMlp), FashionMnistInfo()); }
  std::unique_ptr<OnnxModel> CreateClicks() { return Create(Graph(kClicks), ClickLogsInfo()); }

  std::unique_ptr<ComputeContext> compute_;
  ModelContext context_;
};

// A batch of click logs: `ids` [size, 8], labels alternating.
ExampleBatch ClickBatch(const std::vector<int64_t>& ids) {
  ExampleBatch batch;
  batch.size = static_cast<int64_t>(ids.size()) / 8;
  batch.sparse_ids = ids;
  for (int64_t i = 0; i <= batch.size; ++i) batch.row_splits.push_back(8 * i);
  for (int64_t i = 0; i < batch.size; ++i) batch.labels.push_back(i % 2);
  return batch;
}

// Two examples of 13 dense features and 4 fields, labels 0 and 1.
ExampleBatch DlrmBatch() {
  ExampleBatch batch;
  batch.size = 2;
  batch.dense = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({2, 13}));
  for (int64_t i = 0; i < 26; ++i) batch.dense.data<float>()[i] = 0.1f * (i % 7);
  batch.sparse_ids = {1, 2, 3, 4, 9, 8, 7, 6};
  batch.row_splits = {0, 4, 8};
  batch.labels = {0, 1};
  return batch;
}

// A DLRM's two inputs bind themselves: one float, one int64.
TEST_F(OnnxModelTest, ADlrmReadsDenseFeaturesAndEachFieldsIds) {
  DatasetInfo info;
  info.dense_dim = 13;
  info.sparse_dim = 10;
  info.num_fields = 4;
  std::unique_ptr<OnnxModel> model = Create(Graph(kDlrm), info);
  ASSERT_NE(model, nullptr);
  const ExampleBatch batch = DlrmBatch();
  auto rows = model->RowsToRead(batch);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ(rows->at("tables.0.weight"), (std::vector<int64_t>{1, 9}));
  EXPECT_EQ(rows->at("tables.3.weight"), (std::vector<int64_t>{4, 6}));
  EXPECT_TRUE(testing_util::ModelGradientsMatch(model.get(), batch, 24, /*step=*/1e-3));

  // One pattern makes every field's table dynamic; the dense layers stay.
  OnnxModelSpec dynamic = Graph(kDlrm);
  dynamic.add_dynamic_tables()->set_initializer("tables.*.weight");
  info.sparse_dim = int64_t{1} << 20;
  std::unique_ptr<OnnxModel> any_ids = Create(dynamic, info);
  ASSERT_NE(any_ids, nullptr);
  int dynamic_tables = 0;
  for (const VariableDef& def : any_ids->Variables()) {
    dynamic_tables += def.spec.kind() == VARIABLE_KIND_EMBEDDING && def.spec.shape().dims(0) == 0;
  }
  EXPECT_EQ(dynamic_tables, 4);
  dynamic.add_dynamic_tables()->set_initializer("tables.3.weight");
  EXPECT_THAT(OnnxModel::Create(dynamic, info, context_).status().message(),
              HasSubstr("model.onnx.dynamic_tables[1]: names table tables.3.weight a second time"));

  info.dense_dim = 12;
  EXPECT_THAT(OnnxModel::Create(Graph(kDlrm), info, context_).status().message(),
              HasSubstr("input dense_x takes 13 features per example; the training data has 12"));
}

// Bags of up to 5 ids: the spec says which input takes what.
TEST_F(OnnxModelTest, EmbeddingBagsTrainOnPaddedIds) {
  OnnxModelSpec spec = Graph(kMultiHot);
  ASSERT_TRUE(google::protobuf::TextFormat::MergeFromString(
      R"(inputs { name: "dense_x" dense {} }
         inputs { name: "ids" ids {} }
         inputs { name: "weights" id_weights {} }
         inputs { name: "counts" id_counts {} })",
      &spec));
  DatasetInfo info;
  info.dense_dim = 3;
  info.sparse_dim = 20;
  std::unique_ptr<OnnxModel> model = Create(spec, info);
  ASSERT_NE(model, nullptr);
  ExampleBatch batch;
  batch.size = 3;
  batch.dense = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({3, 3}));
  for (int64_t i = 0; i < 9; ++i) batch.dense.data<float>()[i] = 0.2f * i - 0.5f;
  batch.sparse_ids = {3, 7, 19, 0, 5, 5, 12, 2, 11};
  batch.row_splits = {0, 3, 4, 9};  // 3 ids, 1 id, 5 ids
  batch.labels = {1, 0, 1};
  auto rows = model->RowsToRead(batch);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->at("a.weight"), (std::vector<int64_t>{0, 2, 3, 5, 7, 11, 12, 19}));
  EXPECT_TRUE(testing_util::ModelGradientsMatch(model.get(), batch, 24, /*step=*/1e-3));

  batch.row_splits = {0, 1, 2, 9};  // 7 ids in one example
  EXPECT_THAT(model->RowsToRead(batch).status().message(),
              HasSubstr("example 2 has 7 ids; input ids takes at most 5"));
  spec.mutable_inputs()->RemoveLast();
  EXPECT_THAT(OnnxModel::Create(spec, info, context_).status().message(),
              HasSubstr("model.onnx.inputs leaves out input counts (float [batch, 1])"));
}

TEST_F(OnnxModelTest, DeclaresTheGraphsInitializersAsVariables) {
  std::unique_ptr<OnnxModel> model = CreateMlp();
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->prediction_kind(), PredictionKind::kClassProbabilities);
  EXPECT_EQ(model->prediction_width(), 10);
  const std::vector<VariableDef> defs = model->Variables();
  ASSERT_EQ(defs.size(), 6u);
  EXPECT_EQ(defs[0].spec.name(), "net.1.weight");
  EXPECT_EQ(defs[0].spec.shape().dims(0), 128);  // PyTorch's [out, in]
  EXPECT_EQ(defs[0].spec.shape().dims(1), 784);
  EXPECT_EQ(defs[0].spec.initializer().kind(), INITIALIZER_KIND_ONNX_TENSOR);
  EXPECT_EQ(defs[0].spec.initializer().onnx_path(), kMlp);
  EXPECT_EQ(defs[0].spec.initializer().onnx_tensor(), "net.1.weight");
  EXPECT_TRUE(defs[0].trainable);
}

// Variables created from the declarations, as a parameter server creates
// them, hold PyTorch's weights: the untrained model predicts what PyTorch's
// does (softmax of its logits) on the fixture's input.
TEST_F(OnnxModelTest, StartsFromTheGraphsOwnWeights) {
  std::unique_ptr<OnnxModel> model = CreateMlp();
  ASSERT_NE(model, nullptr);
  std::map<std::string, testing_util::PyTorchTensor> reference =
      testing_util::ReadPyTorchReference("common/model/onnx/testdata/mlp.reference");
  const testing_util::PyTorchTensor& x = reference.at("x");
  const testing_util::PyTorchTensor& y = reference.at("y");
  ExampleBatch batch;
  batch.size = x.dims[0];
  batch.dense = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({batch.size, 784}));
  std::copy(x.values.begin(), x.values.end(), batch.dense.data<float>());
  batch.labels.assign(batch.size, 0.0f);

  auto parameters = testing_util::TestParameters::Create(*model, batch);
  ASSERT_TRUE(parameters.ok()) << parameters.status();
  ModelOutput output;
  ASSERT_TRUE(model->Forward((*parameters)->view(), batch, PassMode::kEval, &output).ok());
  std::vector<float> pytorch_probabilities(y.values.size());
  for (int64_t i = 0; i < batch.size; ++i) {
    const float* logits = y.values.data() + i * 10;
    const float top = *std::max_element(logits, logits + 10);
    double sum = 0;
    for (int k = 0; k < 10; ++k) sum += std::exp(static_cast<double>(logits[k] - top));
    for (int k = 0; k < 10; ++k) {
      pytorch_probabilities[i * 10 + k] =
          static_cast<float>(std::exp(static_cast<double>(logits[k] - top)) / sum);
    }
  }
  EXPECT_TRUE(testing_util::NearPyTorch(output.predictions.data(), pytorch_probabilities, 1e-5,
                                        "probabilities"));
}

// nn.Embedding's weight is a table on the parameter servers, of which a
// batch reads and updates the rows its ids name; the rest stays dense.
TEST_F(OnnxModelTest, AnEmbeddingOfTheIdsIsATable) {
  std::unique_ptr<OnnxModel> model = CreateClicks();
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->prediction_kind(), PredictionKind::kBinaryProbability);
  const std::vector<VariableDef> defs = model->Variables();
  ASSERT_EQ(defs.size(), 5u);
  EXPECT_EQ(defs[0].spec.name(), "embedding.weight");
  EXPECT_EQ(defs[0].spec.kind(), VARIABLE_KIND_EMBEDDING);
  EXPECT_EQ(defs[0].spec.embedding().vocabulary_size(), 8000);
  EXPECT_EQ(defs[0].spec.embedding().dim(), 8);
  EXPECT_EQ(defs[0].spec.initializer().kind(), INITIALIZER_KIND_ONNX_TENSOR);
  EXPECT_EQ(defs[1].spec.kind(), VARIABLE_KIND_DENSE);

  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t field = 0; field < 8; ++field) ids.push_back(field * 1000 + (i * 7 + field) % 4);
  }
  ids[8] = ids[0];  // two examples share an id
  const ExampleBatch batch = ClickBatch(ids);
  auto rows = model->RowsToRead(batch);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  std::vector<int64_t> unique = ids;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  EXPECT_EQ(rows->at("embedding.weight"), unique);
  EXPECT_TRUE(testing_util::ModelGradientsMatch(model.get(), batch, 24, /*step=*/1e-3));
}

TEST_F(OnnxModelTest, RefusesIdsThatDoNotFit) {
  std::unique_ptr<OnnxModel> model = CreateClicks();
  ASSERT_NE(model, nullptr);
  std::vector<int64_t> ids(16, 5);
  ids[11] = 8000;
  EXPECT_THAT(model->RowsToRead(ClickBatch(ids)).status().message(),
              HasSubstr("id 8000 outside embedding table embedding.weight's rows [0, 8000)"));
  ExampleBatch uneven = ClickBatch(std::vector<int64_t>(16, 5));
  uneven.row_splits = {0, 7, 16};
  EXPECT_THAT(model->RowsToRead(uneven).status().message(),
              HasSubstr("example 0 has 7 ids; input x takes one per field, 8"));
  ModelOutput output;
  EXPECT_THAT(model->Forward(ParameterView(), ExampleBatch(), PassMode::kEval, &output).message(),
              HasSubstr("empty batch"));

  ModelSpec spec;
  spec.mutable_onnx()->set_path(kClicks);
  DatasetInfo info;
  info.dense_dim = 784;
  EXPECT_THAT(CreateModel(spec, info, context_).status().message(),
              HasSubstr("input x takes int64 ids; the training data has no sparse ids"));
  info = DatasetInfo();
  info.sparse_dim = 8000;
  info.num_fields = 5;
  EXPECT_THAT(CreateModel(spec, info, context_).status().message(),
              HasSubstr("input x takes 8 ids per example (one per field); the training data has "
                        "5"));
  info.num_fields = 8;
  info.sparse_dim = 9000;
  EXPECT_THAT(CreateModel(spec, info, context_).status().message(),
              HasSubstr("embedding table embedding.weight has 8000 rows; the training data's "
                        "ids go up to 8999"));
  spec.mutable_onnx()->set_path(kMlp);
  EXPECT_THAT(CreateModel(spec, info, context_).status().message(),
              HasSubstr("input x takes float features; the training data has only sparse ids"));
}

// model.onnx.dynamic_tables keeps the graph's table as a dynamic table:
// any 64-bit id has a row, drawn like the graph's rows.
TEST_F(OnnxModelTest, ADynamicTableTakesAnyId) {
  DatasetInfo info = ClickLogsInfo();
  info.sparse_dim = int64_t{1} << 40;
  OnnxModelSpec spec = Graph(kClicks);
  OnnxDynamicTable* table = spec.add_dynamic_tables();
  table->set_initializer("embedding.weight");
  table->set_admit_after(2);
  std::unique_ptr<OnnxModel> model = Create(spec, info);
  ASSERT_NE(model, nullptr);
  const std::vector<VariableDef> defs = model->Variables();
  ASSERT_EQ(defs.size(), 5u);
  const VariableSpec& embedding = defs[0].spec;
  EXPECT_EQ(embedding.kind(), VARIABLE_KIND_EMBEDDING);
  EXPECT_EQ(embedding.shape().dims(0), 0);
  EXPECT_EQ(embedding.embedding().vocabulary_size(), 0);
  EXPECT_EQ(embedding.embedding().dim(), 8);
  EXPECT_EQ(embedding.embedding().admit_after(), 2);
  // make_fixtures.py draws the table from N(0, 0.1).
  EXPECT_EQ(embedding.initializer().kind(), INITIALIZER_KIND_NORMAL);
  EXPECT_NEAR(embedding.initializer().mean(), 0.0, 0.005);
  EXPECT_NEAR(embedding.initializer().stddev(), 0.1, 0.005);
  EXPECT_EQ(defs[1].spec.initializer().kind(), INITIALIZER_KIND_ONNX_TENSOR);

  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t field = 0; field < 8; ++field) ids.push_back((int64_t{1} << 40) + 31 * field + i);
  }
  const ExampleBatch batch = ClickBatch(ids);
  auto rows = model->RowsToRead(batch);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->at("embedding.weight").size(), ids.size());
  EXPECT_TRUE(testing_util::ModelGradientsMatch(model.get(), batch, 24, /*step=*/1e-3));
}

TEST_F(OnnxModelTest, RefusesADynamicTableTheGraphDoesNotHave) {
  DatasetInfo info = ClickLogsInfo();
  ModelSpec spec;
  spec.mutable_onnx()->set_path(kClicks);
  spec.mutable_onnx()->add_dynamic_tables()->set_initializer("mlp.0.weight");
  EXPECT_THAT(CreateModel(spec, info, context_).status().message(),
              HasSubstr("model.onnx.dynamic_tables[0]: common/model/onnx/testdata/clicks.onnx "
                        "has no embedding table mlp.0.weight; its tables: embedding.weight"));
  spec.mutable_onnx()->mutable_dynamic_tables(0)->set_initializer("embedding.weight");
  spec.mutable_onnx()->add_dynamic_tables()->set_initializer("embedding.weight");
  EXPECT_THAT(CreateModel(spec, info, context_).status().message(),
              HasSubstr("model.onnx.dynamic_tables[1]: names table embedding.weight a second "
                        "time"));
  spec.mutable_onnx()->set_path(kMlp);
  EXPECT_THAT(CreateModel(spec, FashionMnistInfo(), context_).status().message(),
              HasSubstr("mlp.onnx has no embedding table embedding.weight (an initializer whose "
                        "rows a Gather picks by ids)"));
}

// The click model trains on click logs from the true model's data, in one
// process, and ranks clicks above the rest.
TEST_F(OnnxModelTest, TrainsOnClickLogsInOneProcess) {
  LocalTrainerOptions options;
  options.max_steps = 600;
  auto trainer = LocalTrainer::Create(
      Spec(absl::StrCat("onnx { path: \"", kClicks, "\" }"), 600, kClickLogs), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(result->eval_metrics.at("auc"), 0.7) << "after 600 steps of 128";
  std::printf("clicks.onnx in one process: AUC %.4f\n", result->eval_metrics.at("auc"));
}

// Twice the fields' ids the graph's table has rows for: only a dynamic
// table takes them.
TEST_F(OnnxModelTest, TrainsADynamicTableOnIdsBeyondTheGraphsRows) {
  const std::string clicks =
      "synthetic_clicks { num_examples: 20000 vocabulary_per_field: 2000 seed: 3 }";
  const std::string data =
      absl::StrCat("train_data { ", clicks, " batch_size: 128 } eval_data { ", clicks,
                   R"( batch_size: 1000 } eval { metrics: [ "auc", "loss" ] })");
  const std::string fixed = absl::StrCat("onnx { path: \"", kClicks, "\" }");
  LocalTrainerOptions options;
  options.max_steps = 600;
  auto refused = LocalTrainer::Create(Spec(fixed, 600, data), options);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("embedding table embedding.weight has 8000 rows; the training data's ids "
                        "go up to 15999"));
  auto trainer = LocalTrainer::Create(
      Spec(absl::StrCat("onnx { path: \"", kClicks,
                        "\" dynamic_tables { initializer: \"embedding.weight\" } }"),
           600, data),
      options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(result->eval_metrics.at("auc"), 0.7) << "after 600 steps of 128";
  std::printf("clicks.onnx with a dynamic table in one process: AUC %.4f\n",
              result->eval_metrics.at("auc"));
}

TEST_F(OnnxModelTest, TrainsOnFashionMnistInOneProcess) {
  LocalTrainerOptions options;
  options.max_steps = 400;
  auto trainer =
      LocalTrainer::Create(Spec(absl::StrCat("onnx { path: \"", kMlp, "\" }"), 400), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(result->eval_metrics.at("accuracy"), 0.78) << "after 400 steps of 64";
}

TEST_F(OnnxModelTest, RefusesWhatDoesNotFit) {
  const ModelContext& context = context_;
  DatasetInfo info;
  info.dense_dim = 100;
  ModelSpec spec;
  spec.mutable_onnx()->set_path(kMlp);
  auto wrong_width = CreateModel(spec, info, context);
  EXPECT_THAT(wrong_width.status().message(),
              HasSubstr("mlp.onnx: input x takes 784 features per example; the training "
                        "data has 100"));
  info.dense_dim = 784;
  spec.mutable_onnx()->set_loss(ONNX_LOSS_MEAN_SQUARED_ERROR);
  EXPECT_THAT(CreateModel(spec, info, context).status().message(),
              HasSubstr("needs one output value per example"));
  spec.mutable_onnx()->set_path("/nonexistent.onnx");
  EXPECT_EQ(CreateModel(spec, info, context).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace pstrain
