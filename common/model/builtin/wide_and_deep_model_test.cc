#include "common/model/builtin/wide_and_deep_model.h"

#include <memory>
#include <vector>

#include "common/model/dnnl/compute_context.h"
#include "common/model/model_gradient_check.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::ModelGradientsMatch;

class WideAndDeepModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compute = ComputeContext::Create();
    ASSERT_TRUE(compute.ok());
    compute_ = std::move(compute).value();
    context_.compute = compute_.get();
    context_.seed = 2;
  }
  std::unique_ptr<WideAndDeepModel> Make(int fields, Combiner combiner, int64_t vocabulary = 0,
                                         int dense_dim = 0) {
    WideAndDeepSpec spec;
    spec.set_num_fields(fields);
    spec.set_dense_dim(dense_dim);
    spec.mutable_embedding()->set_dim(3);
    spec.mutable_embedding()->set_vocabulary_size(vocabulary);
    spec.mutable_embedding()->set_combiner(combiner);
    spec.add_hidden_units(4);
    spec.set_activation(ACTIVATION_TANH);
    auto model = WideAndDeepModel::Create(spec, context_);
    EXPECT_TRUE(model.ok()) << model.status();
    return std::move(model).value();
  }
  std::unique_ptr<ComputeContext> compute_;
  ModelContext context_;
};

ExampleBatch FieldBatch() {
  ExampleBatch batch;
  batch.size = 3;
  batch.row_splits = {0, 2, 4, 6};
  batch.sparse_ids = {1, 12, 3, 12, 1, 15};  // field 0 ids < 10, field 1 ids >= 10
  batch.labels = {1, 0, 1};
  return batch;
}

TEST_F(WideAndDeepModelTest, DeclaresTablesAndDeepLayers) {
  auto model = Make(2, COMBINER_SUM, 20);
  std::vector<std::string> names;
  for (const VariableDef& def : model->Variables()) names.push_back(def.spec.name());
  EXPECT_EQ(names, (std::vector<std::string>{"wide/weights", "wide/bias", "deep/embedding",
                                             "deep/hidden_0/weights", "deep/hidden_0/bias",
                                             "deep/logits/weights", "deep/logits/bias"}));
  EXPECT_EQ(model->Variables()[2].spec.kind(), VARIABLE_KIND_EMBEDDING);
  // Two fields of dim 3 side by side feed the first deep layer.
  EXPECT_EQ(model->Variables()[3].spec.shape().dims(0), 6);
  auto rows = model->RowsToRead(FieldBatch());
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->at("deep/embedding"), (std::vector<int64_t>{1, 3, 12, 15}));
}

TEST_F(WideAndDeepModelTest, GradientsMatchNumericalWithFields) {
  EXPECT_TRUE(ModelGradientsMatch(Make(2, COMBINER_SUM).get(), FieldBatch()));
}

TEST_F(WideAndDeepModelTest, GradientsMatchNumericalWithPooledBags) {
  ExampleBatch batch;
  batch.size = 3;
  batch.row_splits = {0, 3, 4, 6};
  batch.sparse_ids = {4, 8, 9, 8, 2, 4};
  batch.sparse_values = {1, 0.5f, 2, 1, 1.5f, 1};
  batch.labels = {0, 1, 1};
  EXPECT_TRUE(ModelGradientsMatch(Make(0, COMBINER_MEAN).get(), batch));
  EXPECT_TRUE(ModelGradientsMatch(Make(0, COMBINER_SUM).get(), batch));
}

TEST_F(WideAndDeepModelTest, DenseFeaturesFollowTheEmbeddingsInTheDeepInput) {
  auto model = Make(2, COMBINER_SUM, 0, /*dense_dim=*/2);
  // Two fields of dim 3, then 2 dense features.
  EXPECT_EQ(model->Variables()[3].spec.name(), "deep/hidden_0/weights");
  EXPECT_EQ(model->Variables()[3].spec.shape().dims(0), 8);
  ExampleBatch batch = FieldBatch();
  batch.dense = *Tensor::FromValues<float>(Shape({3, 2}), {0.5f, -1, 2, 0.25f, 0, 1.5f});
  EXPECT_TRUE(ModelGradientsMatch(model.get(), batch));

  // The dense features change the prediction: they reach the deep part.
  auto parameters = testing_util::TestParameters::Create(*model, batch);
  ASSERT_TRUE(parameters.ok()) << parameters.status();
  ModelOutput with, without;
  ASSERT_TRUE(model->Forward((*parameters)->view(), batch, PassMode::kEval, &with).ok());
  std::fill_n(batch.dense.data<float>(), 6, 0.0f);
  ASSERT_TRUE(model->Forward((*parameters)->view(), batch, PassMode::kEval, &without).ok());
  EXPECT_NE(with.predictions, without.predictions);

  // A batch without them is refused, saying what the model reads.
  EXPECT_THAT(model->RowsToRead(FieldBatch()).status().message(),
              ::testing::HasSubstr("reads 2 dense features"));
}

TEST_F(WideAndDeepModelTest, RefusesBatchesThatDoNotFit) {
  auto model = Make(2, COMBINER_SUM, 14);
  EXPECT_EQ(model->RowsToRead(FieldBatch()).status().code(), absl::StatusCode::kInvalidArgument);
  ExampleBatch ragged = FieldBatch();
  ragged.row_splits = {0, 1, 4, 6};
  EXPECT_EQ(Make(2, COMBINER_SUM)->RowsToRead(ragged).status().code(),
            absl::StatusCode::kInvalidArgument);
  ExampleBatch dense_only;
  dense_only.size = 1;
  dense_only.labels = {1};
  EXPECT_FALSE(Make(0, COMBINER_SUM)->RowsToRead(dense_only).ok());
}

}  // namespace
}  // namespace pstrain
