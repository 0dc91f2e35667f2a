#include "tests/onnx/onnx_runtime.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr int64_t kDynamic = -1;  // a dim left to the batch: dim_param "batch"

// Gemm weights: y = x * kWeights + kBias, x is [batch, 3], y is [batch, 2].
const std::vector<float> kWeights = {0.5f, -1.0f, 2.0f, 0.25f, -3.0f, 1.5f};
const std::vector<float> kBias = {0.1f, -0.2f};

// LabelEncoder keys and the rows of the table they select; unknown ids get
// the last row.
const std::vector<int64_t> kKeys = {10, 20, 30};
const std::vector<int64_t> kRows = {0, 1, 2};
constexpr int64_t kUnknownRow = 3;
const std::vector<float> kTable = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, -1.0f, -1.0f};

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
}

onnx::ValueInfoProto TensorInfo(const std::string& name, int elem_type,
                                const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  onnx::TypeProto::Tensor* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  for (int64_t dim : dims) {
    onnx::TensorShapeProto::Dimension* d = tensor->mutable_shape()->add_dim();
    if (dim == kDynamic) {
      d->set_dim_param("batch");
    } else {
      d->set_dim_value(dim);
    }
  }
  return info;
}

void AddFloatInitializer(onnx::GraphProto* graph, const std::string& name,
                         const std::vector<int64_t>& dims, const std::vector<float>& values) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor->add_dims(dim);
  for (float value : values) tensor->add_float_data(value);
}

onnx::ModelProto NewModel(bool uses_ml_domain) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("pstrain onnx_runtime_test");
  onnx::OperatorSetIdProto* onnx_opset = model.add_opset_import();
  onnx_opset->set_domain("");
  onnx_opset->set_version(17);
  if (uses_ml_domain) {
    onnx::OperatorSetIdProto* ml_opset = model.add_opset_import();
    ml_opset->set_domain("ai.onnx.ml");
    ml_opset->set_version(3);
  }
  return model;
}

std::string WriteModel(const onnx::ModelProto& model, const std::string& name) {
  const std::string path = TempPath(name);
  std::string bytes;
  EXPECT_TRUE(model.SerializeToString(&bytes));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

// y = Gemm(x, w, b) over a dynamic batch.
std::string WriteGemmModel() {
  onnx::ModelProto model = NewModel(/*uses_ml_domain=*/false);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("gemm");
  *graph->add_input() = TensorInfo("x", onnx::TensorProto::FLOAT, {kDynamic, 3});
  *graph->add_output() = TensorInfo("y", onnx::TensorProto::FLOAT, {kDynamic, 2});
  AddFloatInitializer(graph, "w", {3, 2}, kWeights);
  AddFloatInitializer(graph, "b", {2}, kBias);
  onnx::NodeProto* gemm = graph->add_node();
  gemm->set_op_type("Gemm");
  gemm->add_input("x");
  gemm->add_input("w");
  gemm->add_input("b");
  gemm->add_output("y");
  return WriteModel(model, "gemm.onnx");
}

void AddInts(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attribute->add_ints(value);
}

// index = LabelEncoder(ids); embedding = Gather(table, index): an id
// lookup as exported sparse features do it. Both are graph outputs.
std::string WriteLookupModel() {
  onnx::ModelProto model = NewModel(/*uses_ml_domain=*/true);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("lookup");
  *graph->add_input() = TensorInfo("ids", onnx::TensorProto::INT64, {kDynamic});
  *graph->add_output() = TensorInfo("index", onnx::TensorProto::INT64, {kDynamic});
  *graph->add_output() = TensorInfo("embedding", onnx::TensorProto::FLOAT, {kDynamic, 2});
  AddFloatInitializer(graph, "table", {4, 2}, kTable);
  onnx::NodeProto* encoder = graph->add_node();
  encoder->set_domain("ai.onnx.ml");
  encoder->set_op_type("LabelEncoder");
  encoder->add_input("ids");
  encoder->add_output("index");
  AddInts(encoder, "keys_int64s", kKeys);
  AddInts(encoder, "values_int64s", kRows);
  onnx::AttributeProto* fallback = encoder->add_attribute();
  fallback->set_name("default_int64");
  fallback->set_type(onnx::AttributeProto::INT);
  fallback->set_i(kUnknownRow);
  onnx::NodeProto* gather = graph->add_node();
  gather->set_op_type("Gather");
  gather->add_input("table");
  gather->add_input("index");
  gather->add_output("embedding");
  return WriteModel(model, "lookup.onnx");
}

// What the Gemm model should give, computed here in double.
std::vector<float> ExpectedGemm(const std::vector<float>& x) {
  std::vector<float> y;
  for (size_t row = 0; row * 3 < x.size(); ++row) {
    for (int column = 0; column < 2; ++column) {
      double sum = kBias[column];
      for (int k = 0; k < 3; ++k) sum += double{x[row * 3 + k]} * kWeights[k * 2 + column];
      y.push_back(static_cast<float>(sum));
    }
  }
  return y;
}

TEST(RunInOnnxRuntimeTest, GemmGivesHandComputedValues) {
  const std::string model = WriteGemmModel();
  absl::StatusOr<std::map<std::string, OnnxTensor>> outputs =
      RunInOnnxRuntime(model, {{"x", OnnxTensor::Float({2, 3}, {1, 0, -1, 2, 4, 0.5})}});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 1u);
  const OnnxTensor& y = outputs->at("y");
  EXPECT_FALSE(y.is_int64());
  EXPECT_THAT(y.dims, ElementsAre(2, 2));
  // Row 0: 0.5 - (-3) + 0.1, -1 - 1.5 - 0.2; row 1: 1 + 8 - 1.5 + 0.1,
  // -2 + 1 + 0.75 - 0.2.
  EXPECT_THAT(y.floats, Pointwise(FloatNear(1e-5), {3.6f, -2.7f, 7.6f, -0.45f}));
}

TEST(RunInOnnxRuntimeTest, ChunksABatchLargerThanRowsPerRunAndConcatenates) {
  const std::string model = WriteGemmModel();
  constexpr int64_t kBatch = 2503;  // three runs of 1000, 1000 and 503 rows
  std::vector<float> x;
  for (int64_t i = 0; i < kBatch * 3; ++i) x.push_back(static_cast<float>(i % 97) / 8 - 6);
  absl::StatusOr<std::map<std::string, OnnxTensor>> outputs =
      RunInOnnxRuntime(model, {{"x", OnnxTensor::Float({kBatch, 3}, x)}}, /*rows_per_run=*/1000);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  const OnnxTensor& y = outputs->at("y");
  EXPECT_THAT(y.dims, ElementsAre(kBatch, 2));
  EXPECT_THAT(y.floats, Pointwise(FloatNear(1e-4), ExpectedGemm(x)));
}

TEST(RunInOnnxRuntimeTest, LabelEncoderThenGatherLooksUpIdsWithADefault) {
  const std::string model = WriteLookupModel();
  // 99 is not a key: LabelEncoder maps it to the default row.
  absl::StatusOr<std::map<std::string, OnnxTensor>> outputs =
      RunInOnnxRuntime(model, {{"ids", OnnxTensor::Int64({5}, {20, 10, 99, 30, 10})}});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  const OnnxTensor& index = outputs->at("index");
  EXPECT_TRUE(index.is_int64());
  EXPECT_THAT(index.dims, ElementsAre(5));
  EXPECT_THAT(index.ints, ElementsAre(1, 0, kUnknownRow, 2, 0));
  const OnnxTensor& embedding = outputs->at("embedding");
  EXPECT_FALSE(embedding.is_int64());
  EXPECT_THAT(embedding.dims, ElementsAre(5, 2));
  EXPECT_THAT(embedding.floats, ElementsAre(3, 4, 1, 2, -1, -1, 5, 6, 1, 2));
}

TEST(RunInOnnxRuntimeTest, ChunksInt64InputsAndOutputs) {
  const std::string model = WriteLookupModel();
  const std::vector<int64_t> ids = {10, 20, 30, 40, 10, 20, 30, 40, 10, 20, 30};
  absl::StatusOr<std::map<std::string, OnnxTensor>> outputs =
      RunInOnnxRuntime(model, {{"ids", OnnxTensor::Int64({11}, ids)}}, /*rows_per_run=*/4);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_THAT(outputs->at("index").dims, ElementsAre(11));
  EXPECT_THAT(outputs->at("index").ints, ElementsAreArray({0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2}));
  EXPECT_THAT(outputs->at("embedding").dims, ElementsAre(11, 2));
}

TEST(RunInOnnxRuntimeTest, MissingModelFileIsNotFound) {
  const std::string model = TempPath("no_such_model.onnx");
  absl::StatusOr<std::map<std::string, OnnxTensor>> outputs =
      RunInOnnxRuntime(model, {{"x", OnnxTensor::Float({1, 3}, {1, 2, 3})}});
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(outputs.status().message(), HasSubstr(model));
}

TEST(RunInOnnxRuntimeTest, MissingInputIsNamed) {
  const std::string model = WriteGemmModel();
  absl::StatusOr<std::map<std::string, OnnxTensor>> outputs = RunInOnnxRuntime(model, {});
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outputs.status().message(), HasSubstr("graph input \"x\" has no file"));
}

TEST(RunInOnnxRuntimeTest, InputThatIsNotInTheGraphIsNamed) {
  const std::string model = WriteGemmModel();
  absl::StatusOr<std::map<std::string, OnnxTensor>> outputs =
      RunInOnnxRuntime(model, {{"x", OnnxTensor::Float({1, 3}, {1, 2, 3})},
                               {"features", OnnxTensor::Float({1, 3}, {1, 2, 3})}});
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outputs.status().message(), HasSubstr("\"features\" is not a graph input"));
}

TEST(RunInOnnxRuntimeTest, ValuesThatDoNotMatchDimsAreRejected) {
  const std::string model = WriteGemmModel();
  absl::StatusOr<std::map<std::string, OnnxTensor>> outputs =
      RunInOnnxRuntime(model, {{"x", OnnxTensor::Float({2, 3}, {1, 2, 3})}});
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outputs.status().message(), HasSubstr("input \"x\" has dims [2, 3]"));
}

TEST(RunInOnnxRuntimeTest, WrongInputTypeFailsTheRun) {
  const std::string model = WriteGemmModel();
  absl::StatusOr<std::map<std::string, OnnxTensor>> outputs =
      RunInOnnxRuntime(model, {{"x", OnnxTensor::Int64({1, 3}, {1, 2, 3})}});
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outputs.status().message(), HasSubstr("failed"));
}

TEST(RunInOnnxRuntimeTest, ModelThatDoesNotLoadIsNamed) {
  const std::string model = TempPath("garbage.onnx");
  std::ofstream(model, std::ios::binary | std::ios::trunc) << "not an ONNX model";
  absl::StatusOr<std::map<std::string, OnnxTensor>> outputs =
      RunInOnnxRuntime(model, {{"x", OnnxTensor::Float({1, 3}, {1, 2, 3})}});
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outputs.status().message(), HasSubstr(absl::StrCat("cannot load model ", model)));
}

}  // namespace
}  // namespace pstrain
