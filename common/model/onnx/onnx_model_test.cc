// An imported PyTorch MLP (testdata/mlp.onnx) as a job's model: its
// variables, training in one process on real Fashion-MNIST, and the
// errors a job spec meets at submit.

#include "common/model/onnx/onnx_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/model_factory.h"
#include "common/model/model_gradient_check.h"
#include "common/model/onnx/testdata/pytorch_reference.h"
#include "common/tensor/tensor.h"
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

  // The PyTorch MLP for Fashion-MNIST's 784 features and 10 classes.
  std::unique_ptr<OnnxModel> CreateMlp() {
    DatasetInfo info;
    info.dense_dim = 784;
    info.num_classes = 10;
    OnnxModelSpec spec;
    spec.set_path(kMlp);
    auto model = OnnxModel::Create(spec, info, context_);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? *std::move(model) : nullptr;
  }

  std::unique_ptr<ComputeContext> compute_;
  ModelContext context_;
};

TEST_F(OnnxModelTest, DeclaresTheGraphsInitializersAsVariables) {
  std::unique_ptr<OnnxModel> model = CreateMlp();
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->prediction_kind(), PredictionKind::kClassProbabilities);
  EXPECT_EQ(model->prediction_width(), 10);
  const std::vector<VariableDef> defs = model->Variables();
  ASSERT_EQ(defs.size(), 6u);
  EXPECT_EQ(defs[0].spec.name(), "net.1.weight");
  EXPECT_EQ(defs[0].spec.shape().dims(0), 128);  // PyTorch's [out, in]
  EXPECT_EQ(defs[0].spec.shape().dims(1), 784);
  EXPECT_EQ(defs[0].spec.initializer().kind(), INITIALIZER_KIND_ONNX_TENSOR);
  EXPECT_EQ(defs[0].spec.initializer().onnx_path(), kMlp);
  EXPECT_EQ(defs[0].spec.initializer().onnx_tensor(), "net.1.weight");
  EXPECT_TRUE(defs[0].trainable);
}

// Variables created from the declarations, as a parameter server creates
// them, hold PyTorch's weights: the untrained model predicts what PyTorch's
// does (softmax of its logits) on the fixture's input.
TEST_F(OnnxModelTest, StartsFromTheGraphsOwnWeights) {
  std::unique_ptr<OnnxModel> model = CreateMlp();
  ASSERT_NE(model, nullptr);
  std::map<std::string, testing_util::PyTorchTensor> reference =
      testing_util::ReadPyTorchReference("common/model/onnx/testdata/mlp.reference");
  const testing_util::PyTorchTensor& x = reference.at("x");
  const testing_util::PyTorchTensor& y = reference.at("y");
  ExampleBatch batch;
  batch.size = x.dims[0];
  batch.dense = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({batch.size, 784}));
  std::copy(x.values.begin(), x.values.end(), batch.dense.data<float>());
  batch.labels.assign(batch.size, 0.0f);

  auto parameters = testing_util::TestParameters::Create(*model, batch);
  ASSERT_TRUE(parameters.ok()) << parameters.status();
  ModelOutput output;
  ASSERT_TRUE(model->Forward((*parameters)->view(), batch, ModelMode::kEval, &output).ok());
  std::vector<float> pytorch_probabilities(y.values.size());
  for (int64_t i = 0; i < batch.size; ++i) {
    const float* logits = y.values.data() + i * 10;
    const float top = *std::max_element(logits, logits + 10);
    double sum = 0;
    for (int k = 0; k < 10; ++k) sum += std::exp(static_cast<double>(logits[k] - top));
    for (int k = 0; k < 10; ++k) {
      pytorch_probabilities[i * 10 + k] =
          static_cast<float>(std::exp(static_cast<double>(logits[k] - top)) / sum);
    }
  }
  EXPECT_TRUE(testing_util::NearPyTorch(output.predictions.data(), pytorch_probabilities, 1e-5,
                                        "probabilities"));
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
