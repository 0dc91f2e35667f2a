#include "common/model/builtin/dlrm_model.h"

#include <cmath>
#include <memory>
#include <vector>

#include "common/config/job_spec_defaults.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/model_gradient_check.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::ModelGradientsMatch;
using testing_util::TestParameters;

class DlrmModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compute = ComputeContext::Create();
    ASSERT_TRUE(compute.ok());
    compute_ = std::move(compute).value();
    context_.compute = compute_.get();
    context_.seed = 3;
  }
  // Two fields, two dense features, vectors of dim 3.
  static DlrmSpec SmallSpec(int64_t vocabulary = 0) {
    DlrmSpec spec;
    spec.set_num_fields(2);
    spec.set_dense_dim(2);
    spec.mutable_embedding()->set_dim(3);
    spec.mutable_embedding()->set_vocabulary_size(vocabulary);
    spec.add_bottom_mlp(4);
    spec.add_bottom_mlp(3);
    spec.add_top_mlp(5);
    spec.add_top_mlp(1);
    return spec;
  }
  std::unique_ptr<DlrmModel> Make(const DlrmSpec& spec) {
    auto model = DlrmModel::Create(spec, context_);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? std::move(model).value() : nullptr;
  }
  std::unique_ptr<ComputeContext> compute_;
  ModelContext context_;
};

// Three examples of two fields (field 0's ids below 10, field 1's above)
// and two dense features.
ExampleBatch FieldBatch() {
  ExampleBatch batch;
  batch.size = 3;
  batch.row_splits = {0, 2, 4, 6};
  batch.sparse_ids = {1, 12, 3, 12, 1, 15};
  batch.dense = *Tensor::FromValues<float>(Shape({3, 2}), {0.5f, -1, 2, 0.25f, -0.3f, 1.5f});
  batch.labels = {1, 0, 1};
  return batch;
}

TEST_F(DlrmModelTest, DeclaresBottomTablesAndTopInOrder) {
  auto model = Make(SmallSpec());
  std::vector<std::string> names;
  for (const VariableDef& def : model->Variables()) names.push_back(def.spec.name());
  EXPECT_THAT(names, ElementsAre("dlrm/bottom/hidden_0/weights", "dlrm/bottom/hidden_0/bias",
                                 "dlrm/bottom/hidden_1/weights", "dlrm/bottom/hidden_1/bias",
                                 "dlrm/embedding/field_0", "dlrm/embedding/field_1",
                                 "dlrm/top/hidden_0/weights", "dlrm/top/hidden_0/bias",
                                 "dlrm/top/logits/weights", "dlrm/top/logits/bias"));
  const std::vector<VariableDef> defs = model->Variables();
  // The bottom ends in the embedding dim; a table per field, dynamic.
  EXPECT_EQ(defs[2].spec.shape().dims(1), 3);
  EXPECT_EQ(defs[4].spec.kind(), VARIABLE_KIND_EMBEDDING);
  EXPECT_EQ(defs[4].spec.shape().dims(0), 0);
  EXPECT_EQ(defs[4].spec.shape().dims(1), 3);
  // The top reads the bottom output (3) and the 3 pairs of 3 vectors.
  EXPECT_EQ(defs[6].spec.shape().dims(0), 3 + 3);

  auto rows = model->RowsToRead(FieldBatch());
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->size(), 2u);
  EXPECT_THAT(rows->at("dlrm/embedding/field_0"), ElementsAre(1, 3));
  EXPECT_THAT(rows->at("dlrm/embedding/field_1"), ElementsAre(12, 15));
}

TEST_F(DlrmModelTest, DefaultsAreTheReferenceCriteoConfiguration) {
  ModelSpec filled;
  filled.mutable_dlrm()->set_num_fields(26);
  filled.mutable_dlrm()->set_dense_dim(13);
  FillModelDefaults(&filled);
  auto model = Make(filled.dlrm());
  std::vector<std::vector<int64_t>> shapes;
  for (const VariableDef& def : model->Variables()) {
    if (def.spec.name().find("/weights") == std::string::npos) continue;
    shapes.push_back({def.spec.shape().dims().begin(), def.spec.shape().dims().end()});
  }
  // Bottom 13-512-256-64-16; top (16 + 27 * 26 / 2 = 367)-512-256-1.
  EXPECT_THAT(shapes, ElementsAre(ElementsAre(13, 512), ElementsAre(512, 256), ElementsAre(256, 64),
                                  ElementsAre(64, 16), ElementsAre(367, 512), ElementsAre(512, 256),
                                  ElementsAre(256, 1)));
}

TEST_F(DlrmModelTest, GradientsMatchNumerical) {
  // ReLU's kink makes a large step meaningless; 1e-3 as the MLP's ReLU check.
  EXPECT_TRUE(ModelGradientsMatch(Make(SmallSpec()).get(), FieldBatch(), 24, 1e-3));
  EXPECT_TRUE(
      ModelGradientsMatch(Make(SmallSpec(/*vocabulary=*/16)).get(), FieldBatch(), 24, 1e-3));
}

// The label is whether the two fields' categories agree (an XOR of their
// parities), which no sum of per-field weights can give: the model learns
// it through the dot product of the two embeddings.
TEST_F(DlrmModelTest, LearnsAnInteractionOfTwoFields) {
  DlrmSpec spec = SmallSpec(/*vocabulary=*/20);
  spec.mutable_embedding()->set_dim(4);
  spec.set_bottom_mlp(1, 4);
  spec.set_top_mlp(0, 8);
  auto model = Make(spec);
  ExampleBatch batch;
  batch.size = 32;
  std::vector<float> dense;
  for (int64_t i = 0; i < batch.size; ++i) {
    const int a = i % 2, b = (i / 2) % 2;
    batch.row_splits.push_back(2 * i);
    batch.sparse_ids.push_back(a);
    batch.sparse_ids.push_back(10 + b);
    batch.labels.push_back(a == b ? 1 : 0);
    // Dense features that say nothing of the label.
    dense.push_back(std::sin(i * 1.7f));
    dense.push_back(std::cos(i * 0.3f));
  }
  batch.row_splits.push_back(2 * batch.size);
  batch.dense = *Tensor::FromValues<float>(Shape({batch.size, 2}), dense);

  auto parameters = TestParameters::Create(*model, batch);
  ASSERT_TRUE(parameters.ok()) << parameters.status();
  ModelOutput output;
  Gradients gradients;
  double first_loss = 0;
  for (int step = 0; step < 400; ++step) {
    ASSERT_TRUE(model->ComputeGradients((*parameters)->view(), batch, &output, &gradients).ok());
    if (step == 0) first_loss = output.loss;
    for (const auto& [name, tensor] : (*parameters)->TrainableTensors()) {
      const auto dense_gradient = gradients.dense.find(name);
      const float* g = dense_gradient != gradients.dense.end()
                           ? dense_gradient->second.data<float>()
                           : gradients.rows.at(name).values.data<float>();
      float* values = tensor->data<float>();
      for (int64_t e = 0; e < tensor->shape().num_elements(); ++e) values[e] -= 0.5f * g[e];
    }
  }
  ASSERT_TRUE(model->Forward((*parameters)->view(), batch, PassMode::kEval, &output).ok());
  EXPECT_GT(first_loss, 0.6);
  EXPECT_LT(output.loss, 0.1);
  for (int64_t i = 0; i < batch.size; ++i) {
    EXPECT_EQ(output.predictions[i] > 0.5f, batch.labels[i] == 1) << "example " << i;
  }
}

TEST_F(DlrmModelTest, RefusesBatchesThatDoNotFitNamingWhy) {
  auto model = Make(SmallSpec());
  ExampleBatch no_dense = FieldBatch();
  no_dense.dense = Tensor();
  EXPECT_THAT(model->RowsToRead(no_dense).status().message(),
              HasSubstr("bottom MLP reads 2 dense features"));

  ExampleBatch ragged = FieldBatch();
  ragged.row_splits = {0, 1, 4, 6};
  EXPECT_THAT(model->RowsToRead(ragged).status().message(),
              HasSubstr("example 0 has 1 ids; dlrm expects one per field, 2"));

  ExampleBatch no_ids = FieldBatch();
  no_ids.row_splits.clear();
  no_ids.sparse_ids.clear();
  EXPECT_EQ(model->RowsToRead(no_ids).status().code(), absl::StatusCode::kInvalidArgument);

  // Ids 12 and 15 of field 1 lie outside fixed tables of 14 rows.
  EXPECT_THAT(Make(SmallSpec(/*vocabulary=*/14))->RowsToRead(FieldBatch()).status().message(),
              HasSubstr("id 15 of field 1 outside its table's vocabulary [0, 14)"));

  DlrmSpec unresolved = SmallSpec();
  unresolved.set_dense_dim(0);
  EXPECT_EQ(DlrmModel::Create(unresolved, context_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
