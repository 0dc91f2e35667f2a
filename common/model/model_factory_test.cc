#include "common/model/model_factory.h"

#include <memory>

#include "common/data/example_batch.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/parameters.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

class ModelFactoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compute = ComputeContext::Create();
    ASSERT_TRUE(compute.ok());
    compute_ = std::move(compute).value();
    context_.compute = compute_.get();
  }
  DatasetInfo Images() const {
    DatasetInfo info;
    info.num_examples = 100;
    info.dense_dim = 784;
    info.image_height = info.image_width = 28;
    info.image_channels = 1;
    info.num_classes = 10;
    return info;
  }
  DatasetInfo Clicks() const {
    DatasetInfo info;
    info.num_examples = 100;
    info.sparse_dim = 8000;
    info.num_fields = 8;
    info.num_classes = 2;
    return info;
  }
  std::unique_ptr<ComputeContext> compute_;
  ModelContext context_;
};

TEST_F(ModelFactoryTest, ResolvesDimensionsFromTheData) {
  ModelSpec spec;
  spec.mutable_mlp();
  auto mlp = CreateModel(spec, Images(), context_);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  EXPECT_EQ((*mlp)->name(), "mlp");
  EXPECT_EQ((*mlp)->Variables()[0].spec.shape().dims(0), 784);
  EXPECT_EQ((*mlp)->prediction_width(), 10);

  spec.mutable_cnn();
  auto cnn = CreateModel(spec, Images(), context_);
  ASSERT_TRUE(cnn.ok()) << cnn.status();
  EXPECT_EQ((*cnn)->name(), "cnn");

  spec.mutable_logistic_regression();
  auto sparse_lr = CreateModel(spec, Clicks(), context_);
  ASSERT_TRUE(sparse_lr.ok()) << sparse_lr.status();
  EXPECT_EQ((*sparse_lr)->prediction_kind(), PredictionKind::kBinaryProbability);
  EXPECT_EQ((*sparse_lr)->Variables()[0].spec.kind(), VARIABLE_KIND_EMBEDDING);
  EXPECT_EQ((*sparse_lr)->Variables()[0].spec.shape().dims(0), 8000);
  auto dense_lr = CreateModel(spec, Images(), context_);
  ASSERT_TRUE(dense_lr.ok());
  EXPECT_EQ((*dense_lr)->prediction_kind(), PredictionKind::kClassProbabilities);

  spec.mutable_wide_and_deep();
  auto wide_and_deep = CreateModel(spec, Clicks(), context_);
  ASSERT_TRUE(wide_and_deep.ok()) << wide_and_deep.status();
  // 8 fields of the default 16-wide embeddings.
  EXPECT_EQ((*wide_and_deep)->Variables()[3].spec.shape().dims(0), 128);

  // Criteo's layout: 13 counts, 26 fields.
  DatasetInfo criteo = Clicks();
  criteo.dense_dim = 13;
  criteo.num_fields = 26;
  spec.mutable_dlrm();
  auto dlrm = CreateModel(spec, criteo, context_);
  ASSERT_TRUE(dlrm.ok()) << dlrm.status();
  EXPECT_EQ((*dlrm)->name(), "dlrm");
  EXPECT_EQ((*dlrm)->Variables()[0].spec.shape().dims(0), 13);
  EXPECT_EQ((*dlrm)->Variables()[8].spec.name(), "dlrm/embedding/field_0");
  EXPECT_EQ((*dlrm)->Variables()[8 + 25].spec.name(), "dlrm/embedding/field_25");

  spec.mutable_linear_regression();
  auto linear = CreateModel(spec, Images(), context_);
  ASSERT_TRUE(linear.ok());
  EXPECT_EQ((*linear)->prediction_kind(), PredictionKind::kRegression);
}

TEST_F(ModelFactoryTest, RefusesSpecsThatDisagreeWithTheData) {
  ModelSpec spec;
  spec.mutable_mlp()->set_input_dim(100);
  auto mlp = CreateModel(spec, Images(), context_);
  EXPECT_EQ(mlp.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(mlp.status().message().find("model.mlp.input_dim is 100"), std::string::npos)
      << mlp.status();
  spec.mutable_cnn();
  EXPECT_NE(CreateModel(spec, Clicks(), context_).status().message().find("image"),
            std::string::npos);
  spec.mutable_wide_and_deep();
  EXPECT_FALSE(CreateModel(spec, Images(), context_).ok());
  // dlrm: no dense features, ids of varying number, a field count the data lacks.
  spec.mutable_dlrm();
  const auto dlrm_refusal = [&](const DatasetInfo& info) {
    return std::string(CreateModel(spec, info, context_).status().message());
  };
  EXPECT_NE(dlrm_refusal(Clicks()).find("model.dlrm needs dense features for its bottom MLP"),
            std::string::npos);
  DatasetInfo ragged = Clicks();
  ragged.dense_dim = 13;
  ragged.num_fields = 0;
  EXPECT_NE(dlrm_refusal(ragged).find("model.dlrm needs one id per field"), std::string::npos);
  DatasetInfo criteo = Clicks();
  criteo.dense_dim = 13;
  spec.mutable_dlrm()->set_num_fields(26);
  EXPECT_NE(dlrm_refusal(criteo).find("model.dlrm.num_fields is 26 but the training data has 8"),
            std::string::npos);
  DatasetInfo regression = Images();
  regression.num_classes = 0;
  spec.mutable_mlp();
  EXPECT_FALSE(CreateModel(spec, regression, context_).ok());
  EXPECT_FALSE(CreateModel(ModelSpec(), Images(), context_).ok());
}

// The spec's rules hold for the model as built, whatever the data gave:
// the messages of ValidateJobSpec, naming the field.
TEST_F(ModelFactoryTest, RefusesFieldsOutOfRangeNamingThem) {
  const auto refusal = [&](const ModelSpec& spec, const DatasetInfo& info) {
    return std::string(CreateModel(spec, info, context_).status().message());
  };
  ModelSpec cnn;
  cnn.mutable_cnn()->set_kernel_size(4);
  EXPECT_NE(refusal(cnn, Images()).find("model.cnn.kernel_size must be odd and >= 1, got 4"),
            std::string::npos);
  ModelSpec mlp;
  mlp.mutable_mlp()->set_dropout(1.0f);
  EXPECT_NE(refusal(mlp, Images()).find("model.mlp.dropout must be in [0, 1), got 1"),
            std::string::npos);
  DatasetInfo one_class = Images();
  one_class.num_classes = 1;
  mlp.mutable_mlp()->set_dropout(0);
  EXPECT_NE(refusal(mlp, one_class).find("model.mlp.num_classes"), std::string::npos);
  EXPECT_NE(refusal(cnn, one_class).find("model.cnn.num_classes"), std::string::npos);
  ModelSpec wide_and_deep;
  wide_and_deep.mutable_wide_and_deep()->add_hidden_units(-1);
  EXPECT_NE(refusal(wide_and_deep, Clicks()).find("model.wide_and_deep.hidden_units[0] must be > 0"),
            std::string::npos);
}

// Fields left unset take the defaults a submitted spec would get.
TEST_F(ModelFactoryTest, UnsetFieldsTakeTheSpecDefaults) {
  ModelSpec spec;
  spec.mutable_wide_and_deep();
  auto model = CreateModel(spec, Clicks(), context_);
  ASSERT_TRUE(model.ok()) << model.status();
  // deep/embedding [vocabulary, 16]: the default dim.
  EXPECT_EQ((*model)->Variables()[2].spec.shape().dims(1), 16);
}

TEST_F(ModelFactoryTest, MlpRegressionHasOneOutputWhateverTheLabels) {
  ModelSpec spec;
  spec.mutable_mlp()->set_regression(true);
  DatasetInfo prices = Images();
  prices.num_classes = 347;  // integer targets look like classes
  auto mlp = CreateModel(spec, prices, context_);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  EXPECT_EQ((*mlp)->prediction_kind(), PredictionKind::kRegression);
  EXPECT_EQ((*mlp)->prediction_width(), 1);
  spec.mutable_mlp()->set_num_classes(3);
  EXPECT_FALSE(CreateModel(spec, prices, context_).ok());
}

TEST_F(ModelFactoryTest, StandardizedDataGivesAModelThatChecksItsInputWidth) {
  ModelSpec spec;
  spec.mutable_mlp()->set_regression(true);
  DatasetInfo info;
  info.num_examples = 10;
  info.dense_dim = 2;
  info.dense_mean = {1, 2};
  info.dense_scale = {0.5f, 0.25f};
  auto mlp = CreateModel(spec, info, context_);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  EXPECT_EQ((*mlp)->name(), "mlp");
  ExampleBatch batch;
  batch.size = 1;
  batch.dense = Tensor::FromValues<float>(Shape({1, 3}), {1, 2, 3}).value();
  batch.labels = {0};
  ModelOutput output;
  const absl::Status refused = (*mlp)->Forward(ParameterView(), batch, PassMode::kEval, &output);
  EXPECT_EQ(refused.message(), "the model standardises 2 dense features; the batch has 3");
}

// Errors about classes name the label at fault and where it was read.
TEST_F(ModelFactoryTest, LabelErrorsNameTheFileAndLine) {
  ModelSpec spec;
  spec.mutable_mlp()->set_num_classes(2);
  DatasetInfo eight = Images();
  eight.num_classes = 8;
  eight.label_places.largest = LabelPlace{7, "train.csv:9"};
  EXPECT_EQ(CreateModel(spec, eight, context_).status().message(),
            "model.mlp.num_classes is 2 but the training data has 8 classes: its largest label "
            "is 7 (train.csv:9)");

  spec.mutable_mlp()->set_num_classes(0);
  DatasetInfo negative = Images();
  negative.num_classes = 0;
  negative.label_places.first_non_class = LabelPlace{-1, "train.csv:3"};
  EXPECT_EQ(CreateModel(spec, negative, context_).status().message(),
            "model.mlp.num_classes is 0 (from the data), but the training data's labels are not "
            "all class ids (integers from 0): label -1 (train.csv:3); set it, or train a "
            "regression (mlp's regression: true, linear_regression)");

  spec.mutable_mlp()->set_num_classes(10);
  EXPECT_EQ(CreateModel(spec, negative, context_).status().message(),
            "the training data has label -1 (train.csv:3); model mlp's classes are 0 to 9 "
            "(num_classes 10); a regression (mlp's regression: true, linear_regression) takes "
            "any number");

  ModelSpec clicks;
  clicks.mutable_wide_and_deep();
  DatasetInfo three = Clicks();
  three.num_classes = 3;
  three.label_places.largest = LabelPlace{2, "clicks.tfrecord: record 4 at offset 96"};
  EXPECT_EQ(CreateModel(clicks, three, context_).status().message(),
            "the training data has label 2 (clicks.tfrecord: record 4 at offset 96); model "
            "wide_and_deep takes labels 0 and 1");
}

}  // namespace
}  // namespace pstrain
