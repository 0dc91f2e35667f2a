// A PyTorch-style classifier with BatchNormalization in inference form and
// LayerNormalization (testdata/make_opset_fixtures.py: norms_mnist) trains
// in one process: its normalisations' scales and shifts learn, and its
// running mean and variance stay the statistics the file holds.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/onnx/onnx_file.h"
#include "common/training/local_trainer.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

constexpr char kGraph[] = "common/model/onnx/testdata/norms_mnist.onnx";

JobSpec Spec(int64_t steps) {
  auto raw = ParseJobSpecText(absl::StrCat(
      "model { onnx { path: \"", kGraph,
      "\" } } train_data { fashion_mnist {} batch_size: 64 } eval_data { fashion_mnist {} "
      "batch_size: 1000 } optimizer { adam {} learning_rate: 0.005 } training { seed: 2 } "
      "stop { max_steps: ",
      steps, " } checkpoint { model_dir: \"/tmp/unused\" }"));
  EXPECT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

std::vector<float> Values(const Tensor& tensor) {
  return std::vector<float>(tensor.data<float>(), tensor.data<float>() + tensor.num_elements());
}

TEST(OnnxNormTrainingTest, TrainsScalesAndKeepsStatistics) {
  LocalTrainerOptions options;
  options.max_steps = 300;
  auto trainer = LocalTrainer::Create(Spec(300), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  for (const VariableDef& def : (*trainer)->model().Variables()) {
    const bool statistic =
        def.spec.name() == "bn.running_mean" || def.spec.name() == "bn.running_var";
    EXPECT_EQ(def.trainable, !statistic) << def.spec.name();
  }
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(result->eval_metrics.at("accuracy"), 0.7) << "after 300 steps of 64";
  std::printf("norms_mnist.onnx after 300 steps: accuracy %.4f\n",
              result->eval_metrics.at("accuracy"));
  for (const std::string name : {"bn.running_mean", "bn.running_var"}) {
    const Tensor* trained = (*trainer)->variables().dense(name);
    ASSERT_NE(trained, nullptr) << name;
    EXPECT_EQ(Values(*trained), *ReadOnnxInitializer(kGraph, name)) << name << " changed";
  }
  for (const std::string name : {"bn.weight", "bn.bias", "ln.weight", "ln.bias"}) {
    const Tensor* trained = (*trainer)->variables().dense(name);
    ASSERT_NE(trained, nullptr) << name;
    EXPECT_NE(Values(*trained), *ReadOnnxInitializer(kGraph, name)) << name << " did not train";
  }
}

}  // namespace
}  // namespace pstrain
