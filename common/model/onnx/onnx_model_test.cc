// An imported PyTorch MLP (testdata/mlp.onnx) as a job's model: its
// variables, training in one process on real Fashion-MNIST, and the
// errors a job spec meets at submit.

#include "common/model/onnx/onnx_model.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/model_factory.h"
#include "common/training/local_trainer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr char kMlp[] = "common/model/onnx/testdata/mlp.onnx";

JobSpec Spec(const std::string& model, int64_t steps) {
  auto raw = ParseJobSpecText(absl::StrCat(
      "model { ", model,
      " } train_data { fashion_mnist {} batch_size: 64 } eval_data { fashion_mnist {} "
      "batch_size: 1000 } optimizer { adam {} learning_rate: 0.002 } training { seed: 2 } stop { "
      "max_steps: ",
      steps, " } checkpoint { model_dir: \"/tmp/unused\" }"));
  EXPECT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

// A oneDNN context for models built directly.
class OnnxModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compute = ComputeContext::Create({});
    ASSERT_TRUE(compute.ok()) << compute.status();
    compute_ = std::move(compute).value();
    context_ = ModelContext{compute_.get(), 5};
  }

  std::unique_ptr<ComputeContext> compute_;
  ModelContext context_;
};

TEST_F(OnnxModelTest, DeclaresTheGraphsInitializersAsVariables) {
  const ModelContext& context = context_;
  DatasetInfo info;
  info.dense_dim = 784;
  info.num_classes = 10;
  OnnxModelSpec spec;
  spec.set_path(kMlp);
  auto model = OnnxModel::Create(spec, info, context);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->prediction_kind(), PredictionKind::kClassProbabilities);
  EXPECT_EQ((*model)->prediction_width(), 10);
  const std::vector<VariableDef> defs = (*model)->Variables();
  ASSERT_EQ(defs.size(), 6u);
  EXPECT_EQ(defs[0].spec.name(), "net.1.weight");
  EXPECT_EQ(defs[0].spec.shape().dims(0), 128);  // PyTorch's [out, in]
  EXPECT_EQ(defs[0].spec.shape().dims(1), 784);
  EXPECT_EQ(defs[0].spec.initializer().kind(), INITIALIZER_KIND_GLOROT_UNIFORM);
  EXPECT_EQ(defs[1].spec.initializer().kind(), INITIALIZER_KIND_ZEROS);
  EXPECT_TRUE(defs[0].trainable);
}

TEST_F(OnnxModelTest, TrainsOnFashionMnistInOneProcess) {
  LocalTrainerOptions options;
  options.max_steps = 400;
  auto trainer =
      LocalTrainer::Create(Spec(absl::StrCat("onnx { path: \"", kMlp, "\" }"), 400), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(result->eval_metrics.at("accuracy"), 0.78) << "after 400 steps of 64";
}

TEST_F(OnnxModelTest, RefusesWhatDoesNotFit) {
  const ModelContext& context = context_;
  DatasetInfo info;
  info.dense_dim = 100;
  ModelSpec spec;
  spec.mutable_onnx()->set_path(kMlp);
  auto wrong_width = CreateModel(spec, info, context);
  EXPECT_THAT(wrong_width.status().message(),
              HasSubstr("mlp.onnx: input x takes 784 features per example; the training "
                        "data has 100"));
  info.dense_dim = 784;
  spec.mutable_onnx()->set_loss(ONNX_LOSS_MEAN_SQUARED_ERROR);
  EXPECT_THAT(CreateModel(spec, info, context).status().message(),
              HasSubstr("needs one output value per example"));
  spec.mutable_onnx()->set_path("/nonexistent.onnx");
  EXPECT_EQ(CreateModel(spec, info, context).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace pstrain
