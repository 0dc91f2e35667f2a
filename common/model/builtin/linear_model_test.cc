#include "common/model/builtin/linear_model.h"

#include <cmath>
#include <memory>
#include <vector>

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
                                                                            size * dim, -1, 1, 23)))
                    .value();
  batch.labels = std::move(labels);
  return batch;
}

// Three examples over feature ids < 10, with values.
ExampleBatch SparseBatch(std::vector<float> labels) {
  ExampleBatch batch;
  batch.size = 3;
  batch.row_splits = {0, 2, 3, 6};
  batch.sparse_ids = {1, 7, 3, 1, 4, 9};
  batch.sparse_values = {0.5f, 2, 1, 1.5f, -1, 0.25f};
  batch.labels = std::move(labels);
  return batch;
}

class LinearModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compute = ComputeContext::Create();
    ASSERT_TRUE(compute.ok());
    compute_ = std::move(compute).value();
    context_.compute = compute_.get();
  }
  std::unique_ptr<LinearModel> Make(PredictionKind kind, int64_t input_dim, bool sparse,
                                    int32_t classes = 2) {
    LinearModelOptions options;
    options.kind = kind;
    options.input_dim = input_dim;
    options.sparse_input = sparse;
    options.num_classes = classes;
    auto model = LinearModel::Create(options, context_);
    EXPECT_TRUE(model.ok()) << model.status();
    return std::move(model).value();
  }
  std::unique_ptr<ComputeContext> compute_;
  ModelContext context_;
};

TEST_F(LinearModelTest, DenseGradientsMatchNumerical) {
  EXPECT_TRUE(ModelGradientsMatch(Make(PredictionKind::kRegression, 4, false).get(),
                                  DenseBatch(5, 4, {0.5f, -1, 2, 0, 1})));
  EXPECT_TRUE(ModelGradientsMatch(Make(PredictionKind::kBinaryProbability, 4, false).get(),
                                  DenseBatch(5, 4, {0, 1, 1, 0, 1})));
  EXPECT_TRUE(ModelGradientsMatch(Make(PredictionKind::kClassProbabilities, 4, false, 3).get(),
                                  DenseBatch(5, 4, {0, 1, 2, 2, 1})));
}

TEST_F(LinearModelTest, SparseGradientsMatchNumericalAndReadOnlyBatchRows) {
  auto model = Make(PredictionKind::kBinaryProbability, 10, true);
  ExampleBatch batch = SparseBatch({1, 0, 1});
  auto rows = model->RowsToRead(batch);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->at("linear/weights"), (std::vector<int64_t>{1, 3, 4, 7, 9}));
  EXPECT_EQ(model->Variables()[0].spec.kind(), VARIABLE_KIND_EMBEDDING);
  EXPECT_TRUE(ModelGradientsMatch(model.get(), batch));
  EXPECT_TRUE(ModelGradientsMatch(Make(PredictionKind::kRegression, 10, true).get(),
                                  SparseBatch({0.5f, 2, -1})));
}

TEST_F(LinearModelTest, RegressionPredictsWeightedSum) {
  auto model = Make(PredictionKind::kRegression, 10, true);
  ExampleBatch batch = SparseBatch({0, 0, 0});
  auto params = TestParameters::Create(*model, batch);
  ASSERT_TRUE(params.ok());
  // Row for id k holds k; bias 0.5.
  EmbeddingRows* rows = (*params)->rows("linear/weights");
  for (size_t r = 0; r < rows->ids.size(); ++r) rows->values.data<float>()[r] = rows->ids[r];
  (*params)->dense("linear/bias")->data<float>()[0] = 0.5f;
  ModelOutput output;
  ASSERT_TRUE(model->Forward((*params)->view(), batch, PassMode::kEval, &output).ok());
  EXPECT_FLOAT_EQ(output.predictions[0], 0.5f * 1 + 2 * 7 + 0.5f);
  EXPECT_FLOAT_EQ(output.predictions[1], 3 + 0.5f);
  EXPECT_FLOAT_EQ(output.predictions[2], 1.5f - 4 + 0.25f * 9 + 0.5f);
  const double mse = (std::pow(15.0, 2) + std::pow(3.5, 2) + std::pow(0.25, 2)) / 3;
  EXPECT_NEAR(output.loss, mse, 1e-4);
}

TEST_F(LinearModelTest, RefusesIdsOutOfRange) {
  auto model = Make(PredictionKind::kBinaryProbability, 8, true);
  EXPECT_EQ(model->RowsToRead(SparseBatch({0, 1, 0})).status().code(),
            absl::StatusCode::kInvalidArgument);
  LinearModelOptions options;
  EXPECT_FALSE(LinearModel::Create(options, context_).ok());
}

}  // namespace
}  // namespace pstrain
