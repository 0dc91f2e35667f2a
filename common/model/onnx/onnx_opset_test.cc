// The graphs of opsets 17 to 21 (testdata/make_opset_fixtures.py) load in
// their new forms, with LayerNormalization and BatchNormalization in
// inference form; a numerical check confirms their backward passes; the
// forms the import cannot run are refused, naming the node and why.
// (tests/onnx/onnx_opset_parity_test.cc compares their forward values
// with ONNX Runtime's.)

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/model/layers/gradient_check.h"
#include "common/model/onnx/onnx_program.h"
#include "common/onnx/onnx_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

std::string FixturePath(const std::string& name) {
  return absl::StrCat("common/model/onnx/testdata/", name, ".onnx");
}

// The graph's initializers at their values in the file.
struct FileParameters {
  std::map<std::string, Tensor> tensors;
  ParameterView view;

  FileParameters(const OnnxProgram& program, const std::string& path) {
    for (const OnnxInitializer& init : program.initializers()) {
      absl::StatusOr<std::vector<float>> values = ReadOnnxInitializer(path, init.name);
      EXPECT_TRUE(values.ok()) << values.status();
      Tensor tensor = *Tensor::Create(DATA_TYPE_FLOAT32, Shape(init.dims));
      std::memcpy(tensor.raw_data(), values->data(), values->size() * sizeof(float));
      tensors.emplace(init.name, std::move(tensor));
    }
    for (const auto& [name, tensor] : tensors) view.dense[name] = &tensor;
  }
};

onnx::ModelProto Fixture(const std::string& name) {
  absl::StatusOr<onnx::ModelProto> model = ReadOnnxModel(FixturePath(name));
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : onnx::ModelProto();
}

onnx::NodeProto& NodeNamed(onnx::ModelProto& model, const std::string& name) {
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    if (node.name() == name) return node;
  }
  ADD_FAILURE() << "no node " << name;
  return *model.mutable_graph()->mutable_node(0);
}

void SetInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void SetString(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* attribute = nullptr;
  for (onnx::AttributeProto& a : *node.mutable_attribute()) {
    if (a.name() == name) attribute = &a;
  }
  if (attribute == nullptr) attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::STRING);
  attribute->set_s(value);
}

std::string Refusal(const onnx::ModelProto& model) {
  auto program = OnnxProgram::Parse(model.SerializeAsString(), "model.onnx");
  EXPECT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument) << program.status();
  return std::string(program.status().message());
}

class OpsetFixtureTest : public ::testing::TestWithParam<std::string> {};

// Central differences of L = <output, r> agree with Backward for a sample
// of every trainable parameter; the statistics take no gradient. A step
// that changes which value of a ReduceMax or ReduceMin group is the
// extreme makes the difference jump: the input is one where no two values
// of a group are that close.
TEST_P(OpsetFixtureTest, BackwardMatchesNumericalGradients) {
  const std::string path = FixturePath(GetParam());
  auto program = OnnxProgram::Load(path);
  ASSERT_TRUE(program.ok()) << program.status();
  const int64_t batch = 2;
  const std::vector<float> x =
      testing_util::RandomValues(batch * (*program)->inputs()[0].width, -1.0f, 1.0f, 11);
  const std::vector<float> r =
      testing_util::RandomValues(batch * (*program)->output_width(), -1.0f, 1.0f, 8);
  FileParameters parameters(**program, path);
  auto loss = [&] {
    auto output = (*program)->Forward(parameters.view, batch, x.data(), PassMode::kEval, 1);
    EXPECT_TRUE(output.ok()) << output.status();
    return testing_util::Dot(*output, r.data(), static_cast<int64_t>(r.size()));
  };
  loss();
  Gradients gradients;
  ASSERT_TRUE((*program)->Backward(parameters.view, r.data(), &gradients).ok());
  int checked = 0;
  for (const OnnxInitializer& init : (*program)->initializers()) {
    if (!init.trainable) {
      EXPECT_FALSE(gradients.dense.contains(init.name)) << init.name << " is a statistic";
      continue;
    }
    Tensor& tensor = parameters.tensors.at(init.name);
    const int64_t size = std::min<int64_t>(tensor.num_elements(), 40);
    const std::vector<double> numeric =
        testing_util::NumericalGradient(loss, tensor.data<float>(), size, 1e-3);
    EXPECT_TRUE(testing_util::GradientsNear(gradients.dense.at(init.name).data<float>(), numeric,
                                            2e-3, 3e-2))
        << init.name;
    ++checked;
  }
  EXPECT_GE(checked, 2);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OpsetFixtureTest,
                         ::testing::Values("opset18", "opset19", "opset20", "opset21", "norms17",
                                           "reduce13", "reduce18", "split13", "split18"));

TEST(OnnxOpsetTest, BatchNormalizationStatisticsAreNotTrained) {
  auto program = OnnxProgram::Load(FixturePath("norms17"));
  ASSERT_TRUE(program.ok()) << program.status();
  std::map<std::string, bool> trainable;
  for (const OnnxInitializer& init : (*program)->initializers()) {
    trainable[init.name] = init.trainable;
  }
  EXPECT_FALSE(trainable.at("bn.running_mean"));
  EXPECT_FALSE(trainable.at("bn.running_var"));
  EXPECT_TRUE(trainable.at("bn.weight"));
  EXPECT_TRUE(trainable.at("bn.bias"));
  EXPECT_TRUE(trainable.at("ln.weight"));
  EXPECT_TRUE(trainable.at("w1"));
}

// A statistic also read as a weight elsewhere trains.
TEST(OnnxOpsetTest, AStatisticReadOtherwiseTrains) {
  onnx::ModelProto model = Fixture("norms17");
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    if (node.name() == "gemm1") node.set_input(2, "bn.running_mean");  // b1 [16] as the mean
  }
  auto program = OnnxProgram::Parse(model.SerializeAsString(), "model.onnx");
  ASSERT_TRUE(program.ok()) << program.status();
  for (const OnnxInitializer& init : (*program)->initializers()) {
    EXPECT_EQ(init.trainable, init.name != "bn.running_var") << init.name;
  }
}

TEST(OnnxOpsetTest, RefusesWhatItCannotRun) {
  onnx::ModelProto model = Fixture("norms17");
  SetInt(NodeNamed(model, "bn"), "training_mode", 1);
  EXPECT_THAT(Refusal(model), HasSubstr("node bn (BatchNormalization): training_mode 1 updates "
                                        "the running mean and variance"));

  model = Fixture("norms17");
  NodeNamed(model, "bn").add_output("running_mean_out");
  EXPECT_THAT(Refusal(model), HasSubstr("node bn (BatchNormalization): writes its running "
                                        "statistics"));

  model = Fixture("norms17");
  NodeNamed(model, "bn").set_input(1, "w2");
  EXPECT_THAT(Refusal(model), HasSubstr("node bn (BatchNormalization): its scale is [16, 2]; the "
                                        "input has 16 channels"));

  model = Fixture("norms17");
  SetInt(NodeNamed(model, "layer_norm"), "stash_type", 10);
  EXPECT_THAT(Refusal(model), HasSubstr("node layer_norm (LayerNormalization): stash_type 10 is "
                                        "not supported"));

  model = Fixture("norms17");
  NodeNamed(model, "layer_norm").set_input(1, "w1");
  EXPECT_THAT(Refusal(model), HasSubstr("node layer_norm (LayerNormalization): its Scale is "
                                        "[8, 16]; supported: float of the normalised dims [16]"));

  model = Fixture("opset19");
  SetString(NodeNamed(model, "pad"), "mode", "wrap");
  EXPECT_THAT(Refusal(model), HasSubstr("node pad (Pad): mode wrap is not supported"));

  model = Fixture("opset18");
  NodeNamed(model, "pad").set_input(3, "shape");  // axes [-1, 2, 8]
  EXPECT_THAT(Refusal(model), HasSubstr("node pad (Pad): axes [-1, 2, 8] name a dim outside"));

  model = Fixture("opset21");
  NodeNamed(model, "pad").set_input(3, "pads");  // axes [0, 1, 1, 0], pads of 2 axes
  EXPECT_THAT(Refusal(model), HasSubstr("node pad (Pad): its pads are not known int64 [8] for 4 "
                                        "axes"));

  model = Fixture("opset20");
  SetString(NodeNamed(model, "gelu"), "approximate", "fast");
  EXPECT_THAT(Refusal(model), HasSubstr("node gelu (Gelu): approximate \"fast\" is not "
                                        "supported"));

  model = Fixture("reduce13");
  NodeNamed(model, "squeeze").mutable_input()->RemoveLast();
  EXPECT_THAT(Refusal(model), HasSubstr("node squeeze (Squeeze): needs its axes as a constant "
                                        "int64 input"));

  model = Fixture("reduce13");
  NodeNamed(model, "squeeze").set_input(1, "axis1");
  EXPECT_THAT(Refusal(model), HasSubstr("node squeeze (Squeeze): squeezes dim 1 of [1, 4, 1], "
                                        "which is not 1"));

  model = Fixture("reduce18");
  NodeNamed(model, "min").set_input(1, "r");
  EXPECT_THAT(Refusal(model), HasSubstr("node min (ReduceMin): its axes are not known int64"));

  model = Fixture("reduce18");
  NodeNamed(model, "prod").set_input(1, "shape");  // [-1, 4, 6]
  EXPECT_THAT(Refusal(model), HasSubstr("node prod (ReduceProd): axis 4 is outside [1, 4, 6]"));

  model = Fixture("split18");
  SetInt(NodeNamed(model, "split"), "num_outputs", 4);  // the later of two
  EXPECT_THAT(Refusal(model), HasSubstr("node split (Split): num_outputs is 4; it has 3 outputs"));

  model = Fixture("split13");
  NodeNamed(model, "halves").add_output("b3");
  NodeNamed(model, "halves").add_output("b4");
  EXPECT_THAT(Refusal(model), HasSubstr("node halves (Split): splits dim 1 of [1, 6] into 4 "
                                        "equal parts"));

  model = Fixture("opset21");
  model.mutable_opset_import(0)->set_version(22);
  EXPECT_THAT(Refusal(model), HasSubstr("opset 22 is outside the supported [13, 21]"));
}

// Opset 13's forms still load where later ones changed: Pad without axes
// (opset19 has one), and the rest at opset 13 itself.
TEST(OnnxOpsetTest, EarlierOpsetsStillLoad) {
  onnx::ModelProto model = Fixture("norms17");
  model.mutable_opset_import(0)->set_version(13);
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() == "LayerNormalization") node.set_op_type("Identity");
  }
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() == "Identity") {
      while (node.input_size() > 1) node.mutable_input()->RemoveLast();
    }
  }
  auto program = OnnxProgram::Parse(model.SerializeAsString(), "model.onnx");
  EXPECT_TRUE(program.ok()) << program.status();
}

}  // namespace
}  // namespace pstrain
