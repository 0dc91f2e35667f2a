#include "common/model/builtin/cnn_model.h"

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

// `cnn` with its defaults, as CreateModel hands it over.
CnnSpec Filled(const CnnSpec& cnn) {
  ModelSpec model;
  *model.mutable_cnn() = cnn;
  FillModelDefaults(&model);
  return model.cnn();
}

class CnnModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compute = ComputeContext::Create();
    ASSERT_TRUE(compute.ok());
    compute_ = std::move(compute).value();
    context_.compute = compute_.get();
    context_.seed = 11;
  }
  std::unique_ptr<ComputeContext> compute_;
  ModelContext context_;
};

TEST_F(CnnModelTest, DeclaresTheDefaultArchitecture) {
  CnnSpec spec;
  spec.set_num_classes(10);
  auto model = CnnModel::Create(Filled(spec), CnnImage(), context_);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<VariableDef> defs = (*model)->Variables();
  ASSERT_EQ(defs.size(), 8u);
  EXPECT_EQ(defs[0].spec.name(), "conv1/kernel");
  EXPECT_EQ(*Shape::FromProto(defs[0].spec.shape()), Shape({5, 5, 1, 32}));
  EXPECT_EQ(*Shape::FromProto(defs[2].spec.shape()), Shape({5, 5, 32, 64}));
  // 28 -> 14 -> 7: 7 * 7 * 64 inputs to the dense layer.
  EXPECT_EQ(defs[4].spec.name(), "hidden_0/weights");
  EXPECT_EQ(*Shape::FromProto(defs[4].spec.shape()), Shape({3136, 128}));
  EXPECT_EQ(*Shape::FromProto(defs[6].spec.shape()), Shape({128, 10}));
}

TEST_F(CnnModelTest, GradientsMatchNumerical) {
  CnnSpec spec;
  spec.set_num_classes(3);
  spec.set_conv1_filters(2);
  spec.set_conv2_filters(3);
  spec.set_kernel_size(3);
  spec.set_dense_units(5);
  CnnImage image{8, 8, 2};
  auto model = CnnModel::Create(spec, image, context_);
  ASSERT_TRUE(model.ok()) << model.status();
  ExampleBatch batch;
  batch.size = 2;
  batch.dense = std::move(Tensor::FromValues<float>(Shape({2, 8 * 8 * 2}),
                                                    testing_util::RandomValues(2 * 128, -1, 1, 31)))
                    .value();
  batch.labels = {2, 0};
  // A small step keeps max pooling's choices and ReLU's signs fixed.
  EXPECT_TRUE(ModelGradientsMatch(model->get(), batch, 16, /*step=*/1e-3));
}

// Bad spec fields are refused by CreateModel (model_factory_test).
TEST_F(CnnModelTest, RefusesImagesTooSmallForTwoPoolings) {
  CnnSpec spec;
  spec.set_num_classes(10);
  spec.set_kernel_size(3);
  const auto model = CnnModel::Create(Filled(spec), CnnImage{3, 3, 1}, context_);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(model.status().message().find("at least 4x4"), std::string::npos) << model.status();
}

}  // namespace
}  // namespace pstrain
