// The imported graphs of PyTorch models (testdata/make_fixtures.py) compute
// PyTorch's outputs, and PyTorch's gradients, from PyTorch's weights; a
// numerical check confirms the backward passes; bad files are refused,
// naming what is wrong.

#include "common/model/onnx/onnx_program.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/model/layers/gradient_check.h"
#include "common/model/onnx/testdata/pytorch_reference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace pstrain {
namespace {

using ::pstrain::testing_util::NearPyTorch;
using ::pstrain::testing_util::PyTorchTensor;
using ::pstrain::testing_util::ReadPyTorchReference;
using ::testing::HasSubstr;

constexpr char kTestdata[] = "common/model/onnx/testdata/";

// Parameters holding the graph's own initializer values.
struct GraphParameters {
  std::map<std::string, Tensor> tensors;
  ParameterView view;

  explicit GraphParameters(const OnnxProgram& program) {
    for (const OnnxInitializer& init : program.initializers()) {
      Tensor tensor = *Tensor::Create(DATA_TYPE_FLOAT32, Shape(init.dims));
      std::memcpy(tensor.raw_data(), init.values.data(), init.values.size() * sizeof(float));
      tensors.emplace(init.name, std::move(tensor));
    }
    for (const auto& [name, tensor] : tensors) view.dense[name] = &tensor;
  }
};

class PyTorchFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PyTorchFixtureTest, MatchesPyTorchOutputsAndGradients) {
  // Every fixture's trained output is y (two_outputs also has another).
  auto program = OnnxProgram::Load(absl::StrCat(kTestdata, GetParam(), ".onnx"), "y");
  ASSERT_TRUE(program.ok()) << program.status();
  std::map<std::string, PyTorchTensor> reference =
      ReadPyTorchReference(absl::StrCat(kTestdata, GetParam(), ".reference"));
  const PyTorchTensor& x = reference.at("x");
  const PyTorchTensor& y = reference.at("y");
  const int64_t batch = x.dims[0];
  EXPECT_EQ((*program)->input_width(), static_cast<int64_t>(x.values.size()) / batch);
  EXPECT_EQ((*program)->output_width(), y.dims[1]);

  GraphParameters parameters(**program);
  auto output =
      (*program)->Forward(parameters.view, batch, x.values.data(), ModelMode::kEval, /*seed=*/1);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_TRUE(NearPyTorch(*output, y.values, 1e-5, "output"));

  Gradients gradients;
  ASSERT_TRUE(
      (*program)->Backward(parameters.view, reference.at("r").values.data(), &gradients).ok());
  for (const OnnxInitializer& init : (*program)->initializers()) {
    const PyTorchTensor& want = reference.at("grad/" + init.name);
    const Tensor& got = gradients.dense.at(init.name);
    EXPECT_TRUE(NearPyTorch(got.data<float>(), want.values, 1e-4, "grad/" + init.name));
  }
}

// Central differences of L = <output, r> agree with Backward, parameter
// by parameter (a sample of each), on the fixture's first example. A step
// that moves a ReLU input across zero, or changes which input of a max
// pooling window is largest, makes the difference jump: the step is small
// and the batch one example, so that few activations can cross one.
TEST_P(PyTorchFixtureTest, BackwardMatchesNumericalGradients) {
  // Every fixture's trained output is y (two_outputs also has another).
  auto program = OnnxProgram::Load(absl::StrCat(kTestdata, GetParam(), ".onnx"), "y");
  ASSERT_TRUE(program.ok()) << program.status();
  std::map<std::string, PyTorchTensor> reference =
      ReadPyTorchReference(absl::StrCat(kTestdata, GetParam(), ".reference"));
  const PyTorchTensor& x = reference.at("x");
  const int64_t batch = 1;
  const std::vector<float> r(reference.at("r").values.begin(),
                             reference.at("r").values.begin() + (*program)->output_width());
  GraphParameters parameters(**program);
  auto loss = [&] {
    auto output = (*program)->Forward(parameters.view, batch, x.values.data(), ModelMode::kEval, 1);
    EXPECT_TRUE(output.ok());
    return testing_util::Dot(*output, r.data(), static_cast<int64_t>(r.size()));
  };
  loss();
  Gradients gradients;
  ASSERT_TRUE((*program)->Backward(parameters.view, r.data(), &gradients).ok());
  for (auto& [name, tensor] : parameters.tensors) {
    const int64_t size = std::min<int64_t>(tensor.num_elements(), 40);
    const std::vector<double> numeric =
        testing_util::NumericalGradient(loss, tensor.data<float>(), size, 1e-4);
    EXPECT_TRUE(
        testing_util::GradientsNear(gradients.dense.at(name).data<float>(), numeric, 2e-3, 3e-2))
        << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PyTorchFixtureTest,
                         ::testing::Values("mlp", "elementwise", "cnn", "spatial", "two_outputs"));

// A graph with several outputs loads once the job names the one to train.
TEST(OnnxProgramOutputTest, SeveralOutputsNeedOneNamed) {
  const std::string path = absl::StrCat(kTestdata, "two_outputs.onnx");
  EXPECT_THAT(OnnxProgram::Load(path).status().message(),
              HasSubstr("has 2 outputs (y, features); name the one to train in "
                        "model.onnx.output"));
  EXPECT_THAT(OnnxProgram::Load(path, "logits").status().message(),
              HasSubstr("has no output logits; its outputs: y, features"));
  auto features = OnnxProgram::Load(path, "features");
  ASSERT_TRUE(features.ok()) << features.status();
  EXPECT_EQ((*features)->output_name(), "features");
  EXPECT_EQ((*features)->output_width(), 6);
  auto y = OnnxProgram::Load(path, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)->output_width(), 3);
}

// ------------------------------------------------------------ bad files --

std::string FixtureBytes(const std::string& name) {
  std::ifstream in(absl::StrCat(kTestdata, name, ".onnx"), std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

onnx::ModelProto Fixture(const std::string& name) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(FixtureBytes(name)));
  return model;
}

std::string Refusal(const onnx::ModelProto& model) {
  auto program = OnnxProgram::Parse(model.SerializeAsString(), "model.onnx");
  EXPECT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument) << program.status();
  return std::string(program.status().message());
}

TEST(OnnxProgramRefusalTest, NamesWhatIsWrong) {
  onnx::ModelProto model = Fixture("elementwise");
  model.mutable_graph()->mutable_node(1)->set_op_type("Cos");
  EXPECT_THAT(Refusal(model),
              HasSubstr("node /Tanh (Cos): not supported by pstrain's ONNX import"));

  model = Fixture("elementwise");
  model.mutable_graph()->mutable_node(1)->set_op_type("BatchNormalization");
  EXPECT_THAT(Refusal(model), HasSubstr("(BatchNormalization): its running mean and variance are "
                                        "statistics, not gradients"));

  model = Fixture("elementwise");
  model.mutable_graph()->mutable_initializer(0)->mutable_dims()->Set(0, int64_t{1} << 40);
  EXPECT_THAT(Refusal(model), HasSubstr("has negative dims or more than"));

  model = Fixture("elementwise");
  model.mutable_graph()->mutable_node(2)->mutable_input()->RemoveLast();  // Mul of one
  EXPECT_THAT(Refusal(model), HasSubstr("node /Mul (Mul): has 1 inputs; it takes 2"));

  model = Fixture("elementwise");
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() == "Constant") node.clear_output();
  }
  EXPECT_THAT(Refusal(model), HasSubstr("(Constant): has no output"));

  model = Fixture("elementwise");
  model.mutable_opset_import(0)->set_version(12);
  EXPECT_THAT(Refusal(model), HasSubstr("opset 12 is outside the supported [13, 17]"));

  model = Fixture("elementwise");
  model.mutable_graph()->clear_initializer();
  EXPECT_THAT(Refusal(model), HasSubstr("no float initializer: nothing to train"));

  model = Fixture("elementwise");
  model.mutable_graph()->mutable_initializer(0)->set_data_location(onnx::TensorProto::EXTERNAL);
  EXPECT_THAT(Refusal(model), HasSubstr("initializer w keeps its data in an external file"));

  model = Fixture("elementwise");
  model.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  EXPECT_THAT(Refusal(model), HasSubstr("reads nowhere, which no earlier node"));

  model = Fixture("elementwise");
  model.mutable_graph()->mutable_initializer(0)->mutable_dims()->Set(0, 13);  // 13 x 6, not 12 x 6
  EXPECT_THAT(Refusal(model), HasSubstr("initializer w holds"));

  // A MatMul whose shapes cannot meet.
  model = Fixture("elementwise");
  onnx::TensorProto* w = model.mutable_graph()->mutable_initializer(0);
  w->mutable_dims()->Set(0, 6);
  w->mutable_dims()->Set(1, 12);
  EXPECT_THAT(Refusal(model), HasSubstr("node /MatMul (MatMul): [1, 12] and [6, 12] do not fit"));
}

// x [batch, 12] reshaped to `shape`, times a scalar parameter.
onnx::ModelProto ReshapeModel(const std::vector<int64_t>& shape) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::ValueInfoProto* x = graph->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("batch");
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(12);
  onnx::TensorProto* dims = graph->add_initializer();
  dims->set_name("shape");
  dims->set_data_type(onnx::TensorProto::INT64);
  dims->add_dims(static_cast<int64_t>(shape.size()));
  for (int64_t d : shape) dims->add_int64_data(d);
  onnx::TensorProto* w = graph->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_float_data(2.0f);
  onnx::NodeProto* reshape = graph->add_node();
  reshape->set_op_type("Reshape");
  reshape->set_name("reshape");
  reshape->add_input("x");
  reshape->add_input("shape");
  reshape->add_output("r");
  onnx::NodeProto* mul = graph->add_node();
  mul->set_op_type("Mul");
  mul->add_input("r");
  mul->add_input("w");
  mul->add_output("y");
  graph->add_output()->set_name("y");
  return model;
}

TEST(OnnxProgramRefusalTest, RefusesAReshapeThatDoesNotFit) {
  EXPECT_THAT(Refusal(ReshapeModel({-1, 5})),
              HasSubstr("node reshape (Reshape): cannot reshape [1, 12] to [-1, 5]"));
  EXPECT_THAT(Refusal(ReshapeModel({-1, -1})), HasSubstr("infers two dims"));
  EXPECT_THAT(Refusal(ReshapeModel({-3, 4})), HasSubstr("cannot reshape [1, 12] to [-3, 4]"));
  EXPECT_THAT(Refusal(ReshapeModel({-1, int64_t{1} << 62, 4})), HasSubstr("cannot reshape"));
  // The same graph with a shape that fits loads.
  auto fits = OnnxProgram::Parse(ReshapeModel({0, -1}).SerializeAsString(), "model.onnx");
  EXPECT_TRUE(fits.ok()) << fits.status();
}

TEST(OnnxProgramRefusalTest, RefusesFilesThatAreNotOnnx) {
  const std::string bytes = FixtureBytes("mlp");
  for (const std::string& broken : {std::string(), std::string("not an onnx model at all"),
                                    bytes.substr(0, bytes.size() / 2)}) {
    auto program = OnnxProgram::Parse(broken, "broken.onnx");
    ASSERT_FALSE(program.ok());
    EXPECT_THAT(program.status().message(), HasSubstr("broken.onnx: does not parse as an ONNX"));
  }
  EXPECT_EQ(OnnxProgram::Load("/nonexistent/model.onnx").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace pstrain
