// The graphs of opsets 17 to 21 (common/model/onnx/testdata/
// make_opset_fixtures.py: Pad with axes, AveragePool with dilations, Gelu,
// LayerNormalization, BatchNormalization in inference form, shape
// arithmetic at opset 21) compute in pstrain what ONNX Runtime computes;
// and the graph pstrain exports of each (OnnxProgram::Describe through the
// export's OnnxModelBuilder) declares an opset at which ONNX Runtime runs
// its nodes, and gives the same values.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/export/model_parameters.h"
#include "common/export/onnx_model_builder.h"
#include "common/model/layers/gradient_check.h"
#include "common/model/onnx/onnx_program.h"
#include "common/onnx/onnx_file.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/onnx/onnx_runtime.h"

namespace pstrain {
namespace {

constexpr int64_t kBatch = 7;

std::string FixturePath(const std::string& name) {
  return absl::StrCat("common/model/onnx/testdata/", name, ".onnx");
}

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
}

// Succeeds if every |got[i] - want[i]| <= 1e-5 (1 + |want[i]|).
::testing::AssertionResult Near(const float* got, const std::vector<float>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::abs(got[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i])))) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got[i] << ", ONNX Runtime " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// The graph's variables as an export holds them, set to the file's values.
std::unique_ptr<ModelParameters> FileParameters(const OnnxProgram& program,
                                                const std::string& path) {
  std::vector<VariableDef> defs;
  for (const OnnxInitializer& init : program.initializers()) {
    VariableDef def;
    def.trainable = init.trainable;
    def.spec.set_name(init.name);
    def.spec.set_kind(VARIABLE_KIND_DENSE);
    def.spec.set_dtype(DATA_TYPE_FLOAT32);
    for (int64_t d : init.dims) def.spec.mutable_shape()->add_dims(d);
    defs.push_back(std::move(def));
  }
  auto parameters = ModelParameters::Create(defs, /*job_seed=*/1);
  EXPECT_TRUE(parameters.ok()) << parameters.status();
  for (const OnnxInitializer& init : program.initializers()) {
    absl::StatusOr<std::vector<float>> values = ReadOnnxInitializer(path, init.name);
    EXPECT_TRUE(values.ok()) << values.status();
    std::copy(values->begin(), values->end(),
              (*parameters)->mutable_dense(init.name)->data<float>());
  }
  return std::move(*parameters);
}

class OpsetParityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OpsetParityTest, ImportAndExportMatchOnnxRuntime) {
  const std::string path = FixturePath(GetParam());
  auto program = OnnxProgram::Load(path);
  ASSERT_TRUE(program.ok()) << program.status();
  const int64_t width = (*program)->inputs()[0].width;
  const std::vector<float> x = testing_util::RandomValues(kBatch * width, -2.0f, 2.0f, 3);

  std::unique_ptr<ModelParameters> parameters = FileParameters(**program, path);
  ParameterView view;
  ASSERT_TRUE(parameters->PrepareView(RowIds(), &view).ok());
  auto output = (*program)->Forward(view, kBatch, x.data(), PassMode::kEval, 1);
  ASSERT_TRUE(output.ok()) << output.status();

  auto reference = RunInOnnxRuntime(path, {{"x", OnnxTensor::Float({kBatch, width}, x)}});
  ASSERT_TRUE(reference.ok()) << reference.status();
  const OnnxTensor& y = reference->at("y");
  ASSERT_EQ(y.num_elements(), kBatch * (*program)->output_width());
  EXPECT_TRUE(Near(*output, y.floats)) << "pstrain's import";

  // The export of the imported graph.
  OnnxModelBuilder builder(*parameters);
  // The export's "dense" [batch, width], in the graph input's own dims.
  std::vector<int64_t> dims = {-1};
  for (int64_t d : (*program)->inputs()[0].dims) dims.push_back(d);
  std::string input = builder.DenseInput(width);
  if (dims.size() > 2) {
    input = builder.Node(
        "Reshape", {input, builder.Int64Constant({static_cast<int64_t>(dims.size())}, dims)}, {});
  }
  const std::string predictions = (*program)->Describe(builder, {input});
  builder.Output("predictions", predictions, (*program)->output_width(), "y");
  OnnxModelInfo info;
  info.model_name = GetParam();
  info.prediction_kind = PredictionKind::kRegression;
  info.prediction_width = (*program)->output_width();
  auto built = builder.Finish(info, /*max_inline_bytes=*/int64_t{1} << 30);
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_EQ(built->proto.opset_import_size(), 1);
  const onnx::ModelProto imported = *ReadOnnxModel(path);
  EXPECT_EQ(built->proto.opset_import(0).version(),
            std::max<int64_t>(17, imported.opset_import(0).version()));
  const std::string exported = TempPath(GetParam() + "_export.onnx");
  std::ofstream(exported, std::ios::binary | std::ios::trunc) << built->proto.SerializeAsString();
  auto served = RunInOnnxRuntime(exported, {{"dense", OnnxTensor::Float({kBatch, width}, x)}});
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_TRUE(Near(served->at("predictions").floats.data(), y.floats)) << "the export";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OpsetParityTest,
                         ::testing::Values("opset18", "opset19", "opset20", "opset21", "norms17",
                                           "reduce13", "reduce18", "split13", "split18"));

}  // namespace
}  // namespace pstrain
