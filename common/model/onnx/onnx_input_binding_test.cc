#include "common/model/onnx/onnx_input_binding.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Part = OnnxInputBinding::Part;

OnnxGraphInput Input(const std::string& name, bool is_int64, std::vector<int64_t> dims) {
  OnnxGraphInput input;
  input.name = name;
  input.is_int64 = is_int64;
  input.dims = std::move(dims);
  input.width = 1;
  for (int64_t d : input.dims) input.width *= d;
  return input;
}

// Criteo's shape: 13 dense features, 26 ids, one per field.
DatasetInfo Clicks(int32_t num_fields = 26) {
  DatasetInfo info;
  info.dense_dim = 13;
  info.sparse_dim = 1 << 20;
  info.num_fields = num_fields;
  return info;
}

OnnxModelSpec Spec() {
  OnnxModelSpec spec;
  spec.set_path("dlrm.onnx");
  return spec;
}

std::string Refusal(const OnnxModelSpec& spec, const std::vector<OnnxGraphInput>& inputs,
                    const DatasetInfo& info) {
  auto bindings = BindOnnxInputs(spec, inputs, info);
  EXPECT_FALSE(bindings.ok());
  return std::string(bindings.status().message());
}

TEST(BindOnnxInputsTest, InfersOneFloatAndOneIdsInput) {
  const std::vector<OnnxGraphInput> inputs = {Input("dense_x", false, {13}),
                                              Input("ids", true, {26})};
  auto bindings = BindOnnxInputs(Spec(), inputs, Clicks());
  ASSERT_TRUE(bindings.ok()) << bindings.status();
  EXPECT_EQ((*bindings)[0].part, Part::kDense);
  EXPECT_EQ((*bindings)[1].part, Part::kIds);
  EXPECT_FALSE((*bindings)[1].padded);
}

TEST(BindOnnxInputsTest, AsksForNamesWhenTheGraphDoesNotSay) {
  const std::vector<OnnxGraphInput> inputs = {Input("ids", true, {5}), Input("w", false, {5}),
                                              Input("counts", false, {1})};
  EXPECT_THAT(Refusal(Spec(), inputs, Clicks(0)),
              HasSubstr("dlrm.onnx has inputs ids (int64 [batch, 5]), w (float [batch, 5]), "
                        "counts (float [batch, 1]): name the part of the batch each takes in "
                        "model.onnx.inputs"));
}

TEST(BindOnnxInputsTest, TakesWhatTheSpecNames) {
  const std::vector<OnnxGraphInput> inputs = {Input("w", false, {5}), Input("ids", true, {5}),
                                              Input("counts", false, {}), Input("c3", true, {1})};
  OnnxModelSpec spec = Spec();
  spec.add_inputs()->set_name("ids");
  spec.mutable_inputs(0)->mutable_ids();
  spec.add_inputs()->set_name("w");
  spec.mutable_inputs(1)->mutable_id_weights();
  spec.add_inputs()->set_name("counts");
  spec.mutable_inputs(2)->mutable_id_counts();
  spec.add_inputs()->set_name("c3");
  spec.mutable_inputs(3)->mutable_ids()->set_field(3);
  // Varying ids: the ids input is padded, and no field has its own id.
  EXPECT_THAT(Refusal(spec, inputs, Clicks(0)),
              HasSubstr("input c3 takes the id of field 3; the training data has a varying "
                        "number of ids per example, not fields"));
  auto bindings = BindOnnxInputs(spec, inputs, Clicks(5));
  ASSERT_TRUE(bindings.ok()) << bindings.status();
  EXPECT_EQ((*bindings)[0].part, Part::kIdWeights);
  EXPECT_EQ((*bindings)[1].part, Part::kIds);
  EXPECT_EQ((*bindings)[2].part, Part::kIdCounts);
  EXPECT_EQ((*bindings)[3].part, Part::kFieldIds);
  EXPECT_EQ((*bindings)[3].field, 3);
  EXPECT_THAT(Refusal(spec, inputs, Clicks(3)),
              HasSubstr("input ids takes 5 ids per example (one per field); the training data "
                        "has 3"));
}

TEST(BindOnnxInputsTest, RefusesNamesThatDoNotFitTheGraph) {
  const std::vector<OnnxGraphInput> inputs = {Input("dense_x", false, {13}),
                                              Input("ids", true, {26})};
  OnnxModelSpec spec = Spec();
  spec.add_inputs()->set_name("dense");
  spec.mutable_inputs(0)->mutable_dense();
  EXPECT_THAT(Refusal(spec, inputs, Clicks()),
              HasSubstr("model.onnx.inputs[0]: dlrm.onnx has no input \"dense\"; its inputs: "
                        "dense_x (float [batch, 13]), ids (int64 [batch, 26])"));
  spec.mutable_inputs(0)->set_name("dense_x");
  EXPECT_THAT(Refusal(spec, inputs, Clicks()),
              HasSubstr("model.onnx.inputs leaves out input ids (int64 [batch, 26]) of dlrm.onnx"));
  *spec.add_inputs() = spec.inputs(0);
  EXPECT_THAT(Refusal(spec, inputs, Clicks()),
              HasSubstr("model.onnx.inputs[1] names input dense_x a second time"));
  spec.mutable_inputs(1)->set_name("ids");
  spec.mutable_inputs(1)->clear_dense();
  EXPECT_THAT(Refusal(spec, inputs, Clicks()),
              HasSubstr("model.onnx.inputs[1] names no part of the batch"));
  spec.mutable_inputs(1)->mutable_id_weights();
  EXPECT_THAT(Refusal(spec, inputs, Clicks()),
              HasSubstr("input ids (int64 [batch, 26]) cannot take id_weights, which is float"));
  spec.mutable_inputs(1)->mutable_ids()->set_field(-1);
  EXPECT_THAT(Refusal(spec, inputs, Clicks()), HasSubstr("ids.field is -1"));
}

TEST(BindOnnxInputsTest, RefusesWhatTheDataCannotGive) {
  const std::vector<OnnxGraphInput> inputs = {Input("dense_x", false, {12}),
                                              Input("ids", true, {26})};
  EXPECT_THAT(Refusal(Spec(), inputs, Clicks()),
              HasSubstr("input dense_x takes 12 features per example; the training data has 13"));
  DatasetInfo images;
  images.dense_dim = 784;
  EXPECT_THAT(Refusal(Spec(), {Input("ids", true, {26})}, images),
              HasSubstr("input ids takes int64 ids; the training data has no sparse ids"));
  DatasetInfo ids_only = Clicks();
  ids_only.dense_dim = 0;
  EXPECT_THAT(Refusal(Spec(), inputs, ids_only),
              HasSubstr("input dense_x takes float features; the training data has only sparse "
                        "ids"));
}

ExampleBatch Batch(std::vector<int64_t> splits, std::vector<int64_t> ids) {
  ExampleBatch batch;
  batch.size = static_cast<int64_t>(splits.size()) - 1;
  batch.row_splits = std::move(splits);
  batch.sparse_ids = std::move(ids);
  batch.labels.assign(batch.size, 0);
  return batch;
}

TEST(OnnxBatchInputsTest, PadsIdsWithTheLastAndWeighsThePaddingZero) {
  OnnxInputBinding ids{Part::kIds, 0, /*padded=*/true};
  OnnxBatchInputs inputs({Input("ids", true, {3}), Input("w", false, {3}), Input("n", false, {1})},
                         {ids, {Part::kIdWeights}, {Part::kIdCounts}});
  ExampleBatch batch = Batch({0, 1, 4, 4}, {7, 1, 2, 3});
  batch.sparse_values = {0.5f, 1, 2, 3};
  auto data = inputs.Fill(batch);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(std::vector<int64_t>((*data)[0].ids, (*data)[0].ids + 9),
              ElementsAre(7, 7, 7, 1, 2, 3, 0, 0, 0));
  EXPECT_THAT(std::vector<float>((*data)[1].floats, (*data)[1].floats + 9),
              ElementsAre(0.5f, 0, 0, 1, 2, 3, 0, 0, 0));
  EXPECT_THAT(std::vector<float>((*data)[2].floats, (*data)[2].floats + 3), ElementsAre(1, 3, 0));
  EXPECT_THAT(inputs.Fill(Batch({0, 4}, {1, 2, 3, 4})).status().message(),
              HasSubstr("example 0 has 4 ids; input ids takes at most 3"));
}

TEST(OnnxBatchInputsTest, GivesAFieldItsOwnIds) {
  OnnxBatchInputs inputs({Input("all", true, {2}), Input("second", true, {})},
                         {{Part::kIds}, {Part::kFieldIds, 1}});
  auto data = inputs.Fill(Batch({0, 2, 4}, {10, 11, 20, 21}));
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(std::vector<int64_t>((*data)[1].ids, (*data)[1].ids + 2), ElementsAre(11, 21));
  EXPECT_THAT(inputs.Fill(Batch({0, 2, 3}, {10, 11, 20})).status().message(),
              HasSubstr("example 1 has 1 ids; input all takes one per field, 2"));
  ExampleBatch dense_only;
  dense_only.size = 1;
  EXPECT_THAT(inputs.Fill(dense_only).status().message(), HasSubstr("the batch has no sparse ids"));
}

}  // namespace
}  // namespace pstrain
