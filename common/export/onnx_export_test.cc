// Every built-in model's export holds a model.onnx that passes ONNX's own
// checker and strict shape inference (libonnx, as Debian ships it), with the
// inputs and outputs documented in common/export/onnx_export.h. What ONNX
// Runtime computes from these files is tested in tests/onnx.

#include "common/export/onnx_export.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_env.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/data/test_files.h"
#include "common/export/export_manifest.h"
#include "common/export/export_writer.h"
#include "common/export/testing/trained_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using testing_util::ExportSourceOf;
using testing_util::NewTestDir;
using testing_util::TrainedModel;
using testing_util::TrainModel;

JobSpec Spec(const std::string& model, const std::string& data, const std::string& optimizer) {
  auto raw = ParseJobSpecText(
      absl::StrCat("model { ", model, " } train_data { ", data, " batch_size: 16 } eval_data { ",
                   data, " batch_size: 16 } optimizer { ", optimizer,
                   " learning_rate: 0.05 } training { seed: 7 } stop { max_steps: 100 } "
                   "checkpoint { model_dir: \"/tmp/unused\" }"));
  EXPECT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

std::string ImageData() {
  static const std::string* dir = new std::string(testing_util::WriteToyImageDataset(64, 16));
  return absl::StrCat("fashion_mnist { dir: \"", *dir, "\" }");
}

std::string CsvData(bool binary_labels) {
  std::string lines;
  for (int i = 0; i < 64; ++i) {
    const float a = static_cast<float>(i % 7) / 7, b = static_cast<float>(i % 5) / 5;
    const float label = binary_labels ? static_cast<float>(a > b) : 2 * a - b + 0.5f;
    absl::StrAppend(&lines, label, ",", a, ",", b, ",", a * b, "\n");
  }
  const std::string path =
      testing_util::WriteTestFile(binary_labels ? "binary.csv" : "regression.csv", lines);
  return absl::StrCat("csv { path: \"", path, "\" }");
}

std::string LibsvmData() {
  std::string lines;
  for (int i = 0; i < 64; ++i) {
    absl::StrAppend(&lines, i % 2, " ", 1 + i % 9, ":1 ", 10 + i % 4, ":0.5", i % 3 ? " 20:2" : "",
                    "\n");
  }
  const std::string path = testing_util::WriteTestFile("sparse.libsvm", lines);
  return absl::StrCat("libsvm { path: \"", path, "\" num_features: 24 }");
}

// Criteo-format lines: 13 integer and 26 categorical columns, some empty.
std::string CriteoData() {
  std::string lines;
  for (int i = 0; i < 64; ++i) {
    std::vector<std::string> columns = {absl::StrCat(i % 2)};
    for (int c = 0; c < 13; ++c) columns.push_back(c == i % 13 ? "" : absl::StrCat(i * c % 50));
    for (int c = 0; c < 26; ++c) columns.push_back(absl::StrFormat("%08x", (i + c) % 7));
    absl::StrAppend(&lines, absl::StrJoin(columns, "\t"), "\n");
  }
  const std::string path = testing_util::WriteTestFile("day_0.tsv", lines);
  return absl::StrCat("criteo { paths: \"", path, "\" hash_buckets: 64 }");
}

std::string ClicksData() {
  return "synthetic_clicks { num_examples: 256 num_fields: 4 vocabulary_per_field: 40 seed: 3 }";
}

struct ModelCase {
  std::string name;
  std::string model;
  std::string data;
  std::string optimizer = "sgd {}";
};

std::vector<ModelCase> BuiltInModels() {
  return {
      {"linear_regression", "linear_regression {}", CsvData(false)},
      {"logistic_regression", "logistic_regression {}", CsvData(true)},
      {"multinomial_logistic_regression", "logistic_regression { num_classes: 0 }", ImageData()},
      {"sparse_logistic_regression", "logistic_regression {}", LibsvmData()},
      {"mlp", "mlp { num_classes: 0 hidden_units: [16, 8] }", ImageData()},
      {"mlp_gelu", "mlp { num_classes: 0 hidden_units: [8] activation: ACTIVATION_GELU }",
       ImageData()},
      {"cnn", "cnn { conv1_filters: 4 conv2_filters: 6 kernel_size: 3 dense_units: 8 }",
       ImageData()},
      {"wide_and_deep_fields",
       "wide_and_deep { embedding { vocabulary_size: 160 dim: 4 } hidden_units: [8] }",
       ClicksData(), "adagrad {}"},
      {"wide_and_deep_with_dense", "wide_and_deep { embedding { dim: 4 } hidden_units: [8] }",
       CriteoData(), "adagrad {}"},
      {"dlrm", "dlrm { embedding { dim: 4 } bottom_mlp: [8, 4] top_mlp: [8, 1] }", CriteoData(),
       "adagrad {}"},
      {"wide_and_deep_dynamic_mean",
       "wide_and_deep { embedding { dim: 4 combiner: COMBINER_MEAN } hidden_units: [8] "
       "num_fields: 0 }",
       LibsvmData(), "adagrad {}"},
  };
}

absl::StatusOr<onnx::ModelProto> ReadOnnx(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(path);
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&file)) return absl::DataLossError(path);
  return model;
}

// ONNX's checker (full) and strict shape inference with data propagation;
// returns what they threw, or "".
std::string OnnxCheckerComplaint(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
    onnx::ModelProto inferred = model;
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/true,
                                                                   /*strict_mode=*/1,
                                                                   /*data_prop=*/true));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// "batch x 10" for a value's declared shape.
std::string ShapeOf(const onnx::ValueInfoProto& value) {
  std::vector<std::string> dims;
  for (const auto& dim : value.type().tensor_type().shape().dim()) {
    dims.push_back(dim.has_dim_param() ? dim.dim_param() : absl::StrCat(dim.dim_value()));
  }
  return absl::StrJoin(dims, " x ");
}

class BuiltInModelExportTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(BuiltInModelExportTest, WritesACheckedOnnxModel) {
  PosixEnv env;
  const JobSpec spec = Spec(GetParam().model, GetParam().data, GetParam().optimizer);
  TrainedModel trained = TrainModel(spec, 8);
  const Model& model = trained.trainer->model();
  const std::string dir = JoinPath(NewTestDir(env), "export");
  auto manifest =
      WriteExport(env, dir, ExportSourceOf(trained, spec, 8), model, *trained.parameters);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  ASSERT_TRUE(manifest->has_onnx_model()) << manifest->onnx_omitted();
  EXPECT_EQ(manifest->onnx_model().name(), kExportOnnxFileName);
  EXPECT_FALSE(manifest->has_onnx_data());  // small weights stay inside

  auto onnx_model = ReadOnnx(JoinPath(dir, kExportOnnxFileName));
  ASSERT_TRUE(onnx_model.ok()) << onnx_model.status();
  EXPECT_EQ(OnnxCheckerComplaint(*onnx_model), "");
  EXPECT_EQ(onnx_model->opset_import(0).version(), 17);
  EXPECT_EQ(onnx_model->model_version(), 8);

  const onnx::GraphProto& graph = onnx_model->graph();
  std::vector<std::string> outputs;
  for (const onnx::ValueInfoProto& output : graph.output()) {
    outputs.push_back(output.name());
    EXPECT_EQ(ShapeOf(output), absl::StrCat("batch x ", model.prediction_width())) << output.name();
    EXPECT_THAT(output.doc_string(), HasSubstr("float32 [batch, "));
  }
  EXPECT_THAT(outputs, ::testing::Contains("predictions"));
  for (const onnx::ValueInfoProto& input : graph.input()) {
    EXPECT_THAT(input.name(), ::testing::AnyOf("dense", "sparse_ids", "sparse_values"));
    EXPECT_EQ(ShapeOf(input).substr(0, 5), "batch") << input.name();
    EXPECT_FALSE(input.doc_string().empty()) << input.name();
  }
}

INSTANTIATE_TEST_SUITE_P(Models, BuiltInModelExportTest, ::testing::ValuesIn(BuiltInModels()),
                         [](const auto& info) { return info.param.name; });

const onnx::TensorProto* Initializer(const onnx::GraphProto& graph, const std::string& name) {
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (tensor.name() == name) return &tensor;
  }
  return nullptr;
}

// A dynamic table is written as its stored rows and a zero row last; the
// id map sends every other id to that row, explicitly (LabelEncoder's own
// default, -1, would read the last stored row through Gather).
TEST(OnnxExportTest, ADynamicTableMapsUnknownIdsToAZeroRow) {
  PosixEnv env;
  const ModelCase dynamic = BuiltInModels().back();
  const JobSpec spec = Spec(dynamic.model, dynamic.data, dynamic.optimizer);
  TrainedModel trained = TrainModel(spec, 8);
  const std::string dir = JoinPath(NewTestDir(env), "export");
  ASSERT_TRUE(WriteExport(env, dir, ExportSourceOf(trained, spec, 8), trained.trainer->model(),
                          *trained.parameters)
                  .ok());
  auto onnx_model = ReadOnnx(JoinPath(dir, kExportOnnxFileName));
  ASSERT_TRUE(onnx_model.ok()) << onnx_model.status();
  const onnx::GraphProto& graph = onnx_model->graph();
  int encoders = 0;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() != "LabelEncoder") continue;
    ++encoders;
    EXPECT_EQ(node.domain(), "ai.onnx.ml");
    const std::string table = node.name().substr(0, node.name().find("/row"));
    const EmbeddingTableValues* values = trained.parameters->table(table);
    ASSERT_NE(values, nullptr) << node.name();
    int64_t default_row = -1;
    std::vector<int64_t> keys;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.name() == "default_int64") default_row = attribute.i();
      if (attribute.name() == "keys_int64s")
        keys.assign(attribute.ints().begin(), attribute.ints().end());
    }
    EXPECT_EQ(keys, values->SortedIds());
    EXPECT_EQ(default_row, values->num_rows());
    const onnx::TensorProto* rows = Initializer(graph, table);
    ASSERT_NE(rows, nullptr) << table;
    ASSERT_EQ(rows->dims(0), values->num_rows() + 1);
    const float* data = reinterpret_cast<const float*>(rows->raw_data().data());
    const int64_t dim = values->dim();
    for (int64_t k = 0; k < dim; ++k) EXPECT_EQ(data[values->num_rows() * dim + k], 0.0f);
    EXPECT_EQ(data[0], values->Find(keys[0])[0]);
  }
  EXPECT_EQ(encoders, 2);  // the wide and the deep table
}

// Weights over the inline budget go to model.onnx.data, largest first,
// and the checker (given the file, so it can see the data) accepts both.
TEST(OnnxExportTest, LargeWeightsGoToExternalData) {
  PosixEnv env;
  const JobSpec spec = Spec("mlp { num_classes: 0 hidden_units: [16] }", ImageData(), "sgd {}");
  TrainedModel trained = TrainModel(spec, 2);
  const std::string dir = JoinPath(NewTestDir(env), "export");
  OnnxExportOptions options;
  options.max_inline_bytes = 1024;  // hidden_0/weights, 36 x 16 floats, goes out
  auto manifest = WriteExport(env, dir, ExportSourceOf(trained, spec, 2), trained.trainer->model(),
                              *trained.parameters, options);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  ASSERT_TRUE(manifest->has_onnx_data());
  EXPECT_EQ(manifest->onnx_data().name(), kExportOnnxDataFileName);

  const std::string path = JoinPath(dir, kExportOnnxFileName);
  auto onnx_model = ReadOnnx(path);
  ASSERT_TRUE(onnx_model.ok());
  const onnx::TensorProto* weights = Initializer(onnx_model->graph(), "hidden_0/weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(Initializer(onnx_model->graph(), "logits/bias")->data_location(),
            onnx::TensorProto::DEFAULT);
  try {
    onnx::checker::check_model(path);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
}

// A model that does not describe itself (a plug-in without the hook).
class UndescribedModel : public Model {
 public:
  std::string name() const override { return "undescribed"; }
  std::vector<VariableDef> Variables() const override { return {}; }
  PredictionKind prediction_kind() const override { return PredictionKind::kRegression; }
  int64_t prediction_width() const override { return 1; }
  absl::Status Forward(const ParameterView&, const ExampleBatch&, PassMode, ModelOutput*) override {
    return absl::OkStatus();
  }
  absl::Status ComputeGradients(const ParameterView&, const ExampleBatch&, ModelOutput*,
                                Gradients*) override {
    return absl::OkStatus();
  }
};

// One whose description reads a variable it does not have.
class MisdescribedModel : public UndescribedModel {
 public:
  absl::Status DescribeOnnx(OnnxGraph& graph) const override {
    graph.Output("predictions", graph.Node("Relu", {graph.Variable("no/such")}), 1, "nothing");
    return absl::OkStatus();
  }
};

TEST(OnnxExportTest, AModelWithoutADescriptionExportsWithoutOnnxAndSaysWhy) {
  PosixEnv env;
  const JobSpec spec = Spec("linear_regression {}", CsvData(false), "sgd {}");
  TrainedModel trained = TrainModel(spec, 1);
  const std::string root = NewTestDir(env);

  UndescribedModel undescribed;
  auto manifest = WriteExport(env, JoinPath(root, "a"), ExportSourceOf(trained, spec, 1),
                              undescribed, *trained.parameters);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_FALSE(manifest->has_onnx_model());
  EXPECT_THAT(manifest->onnx_omitted(),
              HasSubstr("model undescribed does not describe an ONNX graph"));
  EXPECT_FALSE(*PathExists(env, JoinPath(JoinPath(root, "a"), kExportOnnxFileName)));

  MisdescribedModel misdescribed;
  manifest = WriteExport(env, JoinPath(root, "b"), ExportSourceOf(trained, spec, 1), misdescribed,
                         *trained.parameters);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_FALSE(manifest->has_onnx_model());
  EXPECT_THAT(manifest->onnx_omitted(), HasSubstr("reads variable no/such"));
  EXPECT_FALSE(*PathExists(env, JoinPath(JoinPath(root, "b"), kExportOnnxFileName)));
}

// A model.onnx that cannot be written fails the whole export, which
// leaves nothing behind: no half-written model.onnx, no folder.
TEST(OnnxExportTest, AFailedOnnxWriteLeavesNoExport) {
  PosixEnv posix;
  TestEnv env(&posix);
  const JobSpec spec = Spec("linear_regression {}", CsvData(false), "sgd {}");
  TrainedModel trained = TrainModel(spec, 1);
  const std::string dir = JoinPath(NewTestDir(env), "export/3");
  for (EnvOp op : {EnvOp::kAppend, EnvOp::kSync}) {
    env.FailOn(op, std::string(kExportOnnxFileName), absl::ResourceExhaustedError("disk full"));
    auto written = WriteExport(env, dir, ExportSourceOf(trained, spec, 3), trained.trainer->model(),
                               *trained.parameters);
    EXPECT_EQ(written.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_FALSE(*PathExists(env, dir));
    EXPECT_FALSE(*PathExists(env, dir + ".tmp"));
    env.ClearFailures();
  }
  ASSERT_TRUE(WriteExport(env, dir, ExportSourceOf(trained, spec, 3), trained.trainer->model(),
                          *trained.parameters)
                  .ok());
  EXPECT_TRUE(*PathExists(env, JoinPath(dir, kExportOnnxFileName)));
}

}  // namespace
}  // namespace pstrain
