#include "common/model/builtin/mlp_model.h"

#include <memory>
#include <vector>

#include "common/config/job_spec_defaults.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/layers/gradient_check.h"
#include "common/model/model_gradient_check.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::ModelGradientsMatch;
using testing_util::TestParameters;

ExampleBatch DenseBatch(int64_t size, int64_t dim, std::vector<float> labels) {
  ExampleBatch batch;
  batch.size = size;
  batch.dense = std::move(Tensor::FromValues<float>(Shape({size, dim}), testing_util::RandomValues(
                                                                            size * dim, -1, 1, 17)))
                    .value();
  batch.labels = std::move(labels);
  return batch;
}

class MlpModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compute = ComputeContext::Create();
    ASSERT_TRUE(compute.ok());
    compute_ = std::move(compute).value();
    context_.compute = compute_.get();
    context_.seed = 5;
  }
  std::unique_ptr<ComputeContext> compute_;
  ModelContext context_;
};

TEST_F(MlpModelTest, DeclaresLayers) {
  ModelSpec filled;
  filled.mutable_mlp()->set_input_dim(784);
  filled.mutable_mlp()->set_num_classes(10);
  FillModelDefaults(&filled);  // as CreateModel does: hidden_units [256, 128]
  auto model = MlpModel::Create(filled.mlp(), context_);
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<std::string> names;
  for (const VariableDef& def : (*model)->Variables()) {
    names.push_back(def.spec.name());
    EXPECT_EQ(def.spec.kind(), VARIABLE_KIND_DENSE);
    EXPECT_TRUE(def.trainable);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"hidden_0/weights", "hidden_0/bias", "hidden_1/weights",
                                      "hidden_1/bias", "logits/weights", "logits/bias"}));
  EXPECT_EQ((*model)->Variables()[0].spec.shape().dims(1), 256);
  EXPECT_EQ((*model)->prediction_width(), 10);
}

TEST_F(MlpModelTest, GradientsMatchNumerical) {
  for (Activation activation : {ACTIVATION_TANH, ACTIVATION_GELU, ACTIVATION_SIGMOID}) {
    MlpSpec spec;
    spec.set_input_dim(6);
    spec.set_num_classes(3);
    spec.add_hidden_units(5);
    spec.add_hidden_units(4);
    spec.set_activation(activation);
    auto model = MlpModel::Create(spec, context_);
    ASSERT_TRUE(model.ok());
    EXPECT_TRUE(ModelGradientsMatch(model->get(), DenseBatch(4, 6, {0, 2, 1, 2})))
        << Activation_Name(activation);
  }
}

TEST_F(MlpModelTest, ReluGradientsMatchNumerical) {
  MlpSpec spec;
  spec.set_input_dim(5);
  spec.set_num_classes(4);
  spec.add_hidden_units(7);
  auto model = MlpModel::Create(spec, context_);
  ASSERT_TRUE(model.ok());
  EXPECT_TRUE(ModelGradientsMatch(model->get(), DenseBatch(3, 5, {3, 0, 1}), 24, /*step=*/1e-3));
}

TEST_F(MlpModelTest, DropoutOnlyInTraining) {
  MlpSpec spec;
  spec.set_input_dim(8);
  spec.set_num_classes(2);
  spec.add_hidden_units(64);
  spec.set_dropout(0.5f);
  auto model = MlpModel::Create(spec, context_);
  ASSERT_TRUE(model.ok());
  ExampleBatch batch = DenseBatch(4, 8, {0, 1, 1, 0});
  auto params = TestParameters::Create(**model, batch);
  ASSERT_TRUE(params.ok());
  ModelOutput eval1, eval2, train;
  ASSERT_TRUE((*model)->Forward((*params)->view(), batch, PassMode::kEval, &eval1).ok());
  ASSERT_TRUE((*model)->Forward((*params)->view(), batch, PassMode::kEval, &eval2).ok());
  ASSERT_TRUE((*model)->Forward((*params)->view(), batch, PassMode::kTrain, &train).ok());
  EXPECT_EQ(eval1.predictions, eval2.predictions);
  EXPECT_NE(eval1.predictions, train.predictions);
}

TEST_F(MlpModelTest, RefusesMismatchedInputsAndParameters) {
  MlpSpec spec;
  spec.set_input_dim(6);
  spec.set_num_classes(3);
  spec.add_hidden_units(4);
  auto model = MlpModel::Create(spec, context_);
  ASSERT_TRUE(model.ok());
  ExampleBatch good = DenseBatch(2, 6, {0, 1});
  auto params = TestParameters::Create(**model, good);
  ASSERT_TRUE(params.ok());
  ModelOutput output;
  auto wide =
      (*model)->Forward((*params)->view(), DenseBatch(2, 7, {0, 1}), PassMode::kEval, &output);
  EXPECT_EQ(wide.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wide.message().find("[2, 6]"), std::string::npos) << wide;
  auto bad_label =
      (*model)->Forward((*params)->view(), DenseBatch(2, 6, {0, 3}), PassMode::kEval, &output);
  EXPECT_EQ(bad_label.code(), absl::StatusCode::kInvalidArgument);
  ParameterView missing = (*params)->view();
  missing.dense.erase("logits/bias");
  auto no_bias = (*model)->Forward(missing, good, PassMode::kEval, &output);
  EXPECT_NE(no_bias.message().find("logits/bias"), std::string::npos) << no_bias;
}

}  // namespace
}  // namespace pstrain
