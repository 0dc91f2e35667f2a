// The imported graphs of PyTorch models (testdata/make_fixtures.py) compute
// PyTorch's outputs, and PyTorch's gradients, from PyTorch's weights; a
// numerical check confirms the backward passes; bad files are refused,
// naming what is wrong.

#include "common/model/onnx/onnx_program.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/model/layers/gradient_check.h"
#include "common/model/onnx/testdata/pytorch_reference.h"
#include "common/onnx/onnx_file.h"
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

std::string FixturePath(const std::string& name) { return absl::StrCat(kTestdata, name, ".onnx"); }

// PyTorch's tensors for the fixture; NAME_external is NAME saved with
// external data, and has NAME's.
std::map<std::string, PyTorchTensor> FixtureReference(const std::string& name) {
  return ReadPyTorchReference(
      absl::StrCat(kTestdata, absl::StripSuffix(name, "_external"), ".reference"));
}

// The fixture's inputs for a batch of `batch`: each input's values, in
// the reference as input/<name> (or x, a graph's one input), features or
// ids (which the reference holds as floats).
struct FixtureInput {
  std::vector<std::vector<int64_t>> ids;  // by input; empty for a float one
  std::vector<OnnxInputData> data;

  FixtureInput(const OnnxProgram& program, const std::map<std::string, PyTorchTensor>& reference,
               int64_t batch) {
    for (const OnnxGraphInput& input : program.inputs()) {
      auto named = reference.find("input/" + input.name);
      const PyTorchTensor& x = named != reference.end() ? named->second : reference.at("x");
      ids.emplace_back();
      if (input.is_int64) {
        ids.back().assign(x.values.begin(), x.values.begin() + batch * input.width);
      }
      OnnxInputData values;
      values.floats = input.is_int64 ? nullptr : x.values.data();
      data.push_back(values);
    }
    for (size_t i = 0; i < data.size(); ++i) {
      if (data[i].floats == nullptr) data[i].ids = ids[i].data();
    }
  }

  absl::StatusOr<const float*> Forward(OnnxProgram& program, const ParameterView& parameters,
                                       int64_t batch) const {
    return program.Forward(parameters, batch, data, PassMode::kEval, 1);
  }
};

// Parameters holding the initializer values of the graph at `path`: dense
// ones whole, an embedding table as the rows its Gathers read for `input`
// (in descending order, not as the ids come, so that a pass must look each
// one up).
struct GraphParameters {
  std::map<std::string, Tensor> tensors;  // dense variables and tables' rows
  std::map<std::string, EmbeddingRows> tables;
  ParameterView view;

  GraphParameters(OnnxProgram& program, const std::string& path, const FixtureInput& input,
                  int64_t batch) {
    absl::StatusOr<RowIds> table_ids = program.TableIds(batch, input.data);
    EXPECT_TRUE(table_ids.ok()) << table_ids.status();
    for (const OnnxInitializer& init : program.initializers()) {
      absl::StatusOr<std::vector<float>> values = ReadOnnxInitializer(path, init.name);
      EXPECT_TRUE(values.ok()) << values.status();
      if (!init.embedding_table) {
        Tensor tensor = *Tensor::Create(DATA_TYPE_FLOAT32, Shape(init.dims));
        std::memcpy(tensor.raw_data(), values->data(), values->size() * sizeof(float));
        tensors.emplace(init.name, std::move(tensor));
        continue;
      }
      const int64_t dim = init.dims[1];
      EmbeddingRows rows;
      rows.ids = (*table_ids)[init.name];
      std::reverse(rows.ids.begin(), rows.ids.end());
      rows.values =
          *Tensor::Create(DATA_TYPE_FLOAT32, Shape({static_cast<int64_t>(rows.ids.size()), dim}));
      for (size_t r = 0; r < rows.ids.size(); ++r) {
        std::copy_n(values->data() + rows.ids[r] * dim, dim, rows.values.data<float>() + r * dim);
      }
      tables.emplace(init.name, std::move(rows));
    }
    for (const auto& [name, tensor] : tensors) view.dense[name] = &tensor;
    for (const auto& [name, rows] : tables) view.rows[name] = &rows;
  }

  // Every trainable value buffer with its name, for perturbation.
  std::map<std::string, Tensor*> Trainable() {
    std::map<std::string, Tensor*> all;
    for (auto& [name, tensor] : tensors) all[name] = &tensor;
    for (auto& [name, rows] : tables) all[name] = &rows.values;
    return all;
  }
};

// A gradient Backward gave: a dense variable's, or a table's rows.
const float* GradientOf(const Gradients& gradients, const std::string& name) {
  if (auto rows = gradients.rows.find(name); rows != gradients.rows.end()) {
    return rows->second.values.data<float>();
  }
  return gradients.dense.at(name).data<float>();
}

class PyTorchFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PyTorchFixtureTest, MatchesPyTorchOutputsAndGradients) {
  // Every fixture's trained output is y (two_outputs also has another).
  auto program = OnnxProgram::Load(FixturePath(GetParam()), "y");
  ASSERT_TRUE(program.ok()) << program.status();
  std::map<std::string, PyTorchTensor> reference = FixtureReference(GetParam());
  const PyTorchTensor& y = reference.at("y");
  const int64_t batch = y.dims[0];
  EXPECT_EQ((*program)->output_width(), y.dims[1]);

  const FixtureInput input(**program, reference, batch);
  GraphParameters parameters(**program, FixturePath(GetParam()), input, batch);
  auto output = input.Forward(**program, parameters.view, batch);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_TRUE(NearPyTorch(*output, y.values, 1e-5, "output"));

  Gradients gradients;
  ASSERT_TRUE(
      (*program)->Backward(parameters.view, reference.at("r").values.data(), &gradients).ok());
  for (const OnnxInitializer& init : (*program)->initializers()) {
    const PyTorchTensor& want = reference.at("grad/" + init.name);
    if (!init.embedding_table) {
      const Tensor& got = gradients.dense.at(init.name);
      EXPECT_TRUE(NearPyTorch(got.data<float>(), want.values, 1e-4, "grad/" + init.name));
      continue;
    }
    // The rows of the batch's ids, as given; PyTorch's gradient of every
    // other row is zero.
    const EmbeddingRows& got = gradients.rows.at(init.name);
    ASSERT_EQ(got.ids, parameters.tables.at(init.name).ids);
    const int64_t dim = init.dims[1];
    std::vector<float> want_rows;
    std::vector<float> elsewhere = want.values;
    for (int64_t id : got.ids) {
      want_rows.insert(want_rows.end(), want.values.begin() + id * dim,
                       want.values.begin() + (id + 1) * dim);
      std::fill_n(elsewhere.begin() + id * dim, dim, 0.0f);
    }
    EXPECT_TRUE(NearPyTorch(got.values.data<float>(), want_rows, 1e-4, "grad/" + init.name));
    EXPECT_TRUE(std::all_of(elsewhere.begin(), elsewhere.end(), [](float v) { return v == 0; }))
        << "PyTorch's gradient has rows of ids outside the batch";
  }
}

// Central differences of L = <output, r> agree with Backward, parameter
// by parameter (a sample of each), on the fixture's first example. A step
// that moves a ReLU input across zero, or changes which input of a max
// pooling window is largest, makes the difference jump: the step is small
// and the batch one example, so that few activations can cross one.
TEST_P(PyTorchFixtureTest, BackwardMatchesNumericalGradients) {
  // Every fixture's trained output is y (two_outputs also has another).
  auto program = OnnxProgram::Load(FixturePath(GetParam()), "y");
  ASSERT_TRUE(program.ok()) << program.status();
  std::map<std::string, PyTorchTensor> reference = FixtureReference(GetParam());
  const int64_t batch = 1;
  const std::vector<float> r(reference.at("r").values.begin(),
                             reference.at("r").values.begin() + (*program)->output_width());
  const FixtureInput input(**program, reference, batch);
  GraphParameters parameters(**program, FixturePath(GetParam()), input, batch);
  auto loss = [&] {
    auto output = input.Forward(**program, parameters.view, batch);
    EXPECT_TRUE(output.ok());
    return testing_util::Dot(*output, r.data(), static_cast<int64_t>(r.size()));
  };
  loss();
  Gradients gradients;
  ASSERT_TRUE((*program)->Backward(parameters.view, r.data(), &gradients).ok());
  for (auto& [name, tensor] : parameters.Trainable()) {
    const int64_t size = std::min<int64_t>(tensor->num_elements(), 40);
    const std::vector<double> numeric =
        testing_util::NumericalGradient(loss, tensor->data<float>(), size, 1e-4);
    EXPECT_TRUE(testing_util::GradientsNear(GradientOf(gradients, name), numeric, 2e-3, 3e-2))
        << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PyTorchFixtureTest,
                         ::testing::Values("mlp", "elementwise", "cnn", "spatial", "two_outputs",
                                           "clicks", "elementwise_external", "dlrm", "multi_hot"));

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
  // The layer only y reads is no variable of a job that trains features.
  std::vector<std::string> variables;
  for (const OnnxInitializer& init : (*features)->initializers()) variables.push_back(init.name);
  EXPECT_EQ(variables, (std::vector<std::string>{"hidden.weight", "hidden.bias"}));
  auto y = OnnxProgram::Load(path, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)->output_width(), 3);
  EXPECT_EQ((*y)->initializers().size(), 4u);
}

// ------------------------------------------------------------ bad files --

std::string FixtureBytes(const std::string& name) {
  std::ifstream in(FixturePath(name), std::ios::binary);
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
  EXPECT_THAT(Refusal(model),
              HasSubstr("node /Tanh (BatchNormalization): has 1 inputs; it takes 5"));

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
  EXPECT_THAT(Refusal(model), HasSubstr("opset 12 is outside the supported [13, 21]"));

  model = Fixture("elementwise");
  model.mutable_graph()->clear_initializer();
  EXPECT_THAT(Refusal(model), HasSubstr("no float initializer: nothing to train"));

  // External data is read beside the model's file (onnx_external_data_test
  // covers where); bytes have no folder.
  model = Fixture("elementwise_external");
  EXPECT_THAT(Refusal(model), HasSubstr("initializer w keeps its data in an external file, and a "
                                        "graph not read from a file has no folder to find it in"));

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

// clicks.onnx: Gather(embedding.weight, x) -> Flatten -> Gemm -> Relu -> Gemm.
TEST(OnnxProgramRefusalTest, RefusesIdsReadOtherwiseThanByATable) {
  onnx::ModelProto model = Fixture("clicks");
  onnx::AttributeProto* axis = model.mutable_graph()->mutable_node(0)->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  EXPECT_THAT(Refusal(model),
              HasSubstr("node /embedding/Gather (Gather): gathers from initializer "
                        "embedding.weight [8000, 8] along axis 1; an embedding table is [rows, "
                        "dim], gathered along axis 0"));

  model = Fixture("clicks");
  model.mutable_graph()->mutable_node(2)->set_input(1, "embedding.weight");
  EXPECT_THAT(Refusal(model), HasSubstr("node /mlp/mlp.0/Gemm (Gemm): reads embedding table "
                                        "embedding.weight whole"));

  // A node of one input reading the table.
  model = Fixture("clicks");
  model.mutable_graph()->mutable_node(1)->set_input(0, "embedding.weight");
  EXPECT_THAT(Refusal(model), HasSubstr("node /Flatten (Flatten): reads embedding table "
                                        "embedding.weight whole"));

  // Flatten selects ids, and keeps them ids: the Gemm computes with them.
  model = Fixture("clicks");
  model.mutable_graph()->mutable_node(1)->set_input(0, "x");
  EXPECT_THAT(Refusal(model), HasSubstr("node /mlp/mlp.0/Gemm (Gemm): computes with the ids of "));
  EXPECT_THAT(Refusal(model), HasSubstr("pstrain reads ids only to gather the rows of an "
                                        "embedding table"));

  model = Fixture("clicks");
  model.mutable_graph()->mutable_node(0)->set_input(0, "x");
  EXPECT_THAT(Refusal(model), HasSubstr("node /embedding/Gather (Gather): selects ids by x, which "
                                        "depends on the inputs; only constants can select ids"));

  model = Fixture("clicks");
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT32);
  EXPECT_THAT(Refusal(model), HasSubstr("input x is neither float32 [batch, ...] nor int64 ids "
                                        "[batch] or [batch, n]"));
}

TEST(OnnxProgramTest, TakesTheInputItsGraphHas) {
  auto clicks = OnnxProgram::Load(absl::StrCat(kTestdata, "clicks.onnx"));
  ASSERT_TRUE(clicks.ok()) << clicks.status();
  ASSERT_EQ((*clicks)->inputs().size(), 1u);
  EXPECT_TRUE((*clicks)->inputs()[0].is_int64);
  const float features[8] = {};
  EXPECT_THAT(
      (*clicks)->Forward(ParameterView(), 1, features, PassMode::kEval, 1).status().message(),
      HasSubstr("input x takes int64 ids, not float values"));
  EXPECT_THAT((*clicks)
                  ->Forward(ParameterView(), 1, std::vector<int64_t>(7), PassMode::kEval, 1)
                  .status()
                  .message(),
              HasSubstr("a batch of 1 for input x holds 8 ids; given 7"));
  // A table given without one of the batch's rows.
  const FixtureInput input(**clicks,
                           ReadPyTorchReference(absl::StrCat(kTestdata, "clicks.reference")), 1);
  GraphParameters parameters(**clicks, FixturePath("clicks"), input, 1);
  EmbeddingRows& rows = parameters.tables.at("embedding.weight");
  rows.ids[0] = 7999 - rows.ids[0] % 1000;  // a row no field of the example names
  EXPECT_THAT(input.Forward(**clicks, parameters.view, 1).status().message(),
              HasSubstr("has no row among those given of embedding table embedding.weight"));

  auto mlp = OnnxProgram::Load(absl::StrCat(kTestdata, "mlp.onnx"));
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  EXPECT_FALSE((*mlp)->inputs()[0].is_int64);
  EXPECT_THAT((*mlp)
                  ->Forward(ParameterView(), 1, std::vector<int64_t>(784), PassMode::kEval, 1)
                  .status()
                  .message(),
              HasSubstr("input x takes float values, not ids"));
}

// nn.EmbeddingBag as PyTorch 1.13 exports it: a Loop over the bags.
TEST(OnnxProgramRefusalTest, RefusesAnEmbeddingBagsLoopSayingWhatTrains) {
  EXPECT_THAT(Refusal(Fixture("embedding_bag")),
              HasSubstr("(Loop): pstrain trains feed-forward graphs, without loops; "
                        "torch.onnx.export writes nn.EmbeddingBag this way. Write a bag as "
                        "nn.Embedding over ids padded to [batch, n]"));
}

// A DLRM's inputs: dense features and the ids of 4 fields, each field's
// table gathering its own column of the ids.
TEST(OnnxProgramTest, ATableMayGatherOneFieldOfTheIds) {
  auto dlrm = OnnxProgram::Load(FixturePath("dlrm"));
  ASSERT_TRUE(dlrm.ok()) << dlrm.status();
  ASSERT_EQ((*dlrm)->inputs().size(), 2u);
  EXPECT_EQ((*dlrm)->inputs()[0].name, "dense_x");
  EXPECT_FALSE((*dlrm)->inputs()[0].is_int64);
  EXPECT_EQ((*dlrm)->inputs()[1].width, 4);
  const std::vector<int64_t> ids = {1, 2, 3, 4, 5, 6, 7, 8};  // 2 examples of 4 fields
  const std::vector<float> dense(26, 0.5f);
  std::vector<OnnxInputData> inputs(2);
  inputs[0].floats = dense.data();
  inputs[1].ids = ids.data();
  auto rows = (*dlrm)->TableIds(2, inputs);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 4u);
  int tables_with_their_field = 0;
  for (const auto& [table, read] : *rows) {
    ASSERT_EQ(read.size(), 2u) << table << " " << absl::StrJoin(read, ",");
    // Field k of the two examples: ids k + 1 and k + 5.
    EXPECT_EQ(read[1] - read[0], 4) << table;
    tables_with_their_field += read[0] >= 1 && read[0] <= 4;
  }
  EXPECT_EQ(tables_with_their_field, 4);
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
