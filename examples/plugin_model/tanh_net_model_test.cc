// Loads the example plug-in by path, checks its gradients, and trains it
// with the single-process trainer from a job spec that names the library.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/data/test_files.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/layers/gradient_check.h"
#include "common/model/model_gradient_check.h"
#include "common/model/plugin_model_loader.h"
#include "common/training/local_trainer.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

// Relative to the test's runfiles folder, its working directory.
constexpr char kLibrary[] = "examples/plugin_model/libtanh_net_model.so";

TEST(TanhNetPluginTest, LoadsAndHasCorrectGradients) {
  auto compute = ComputeContext::Create();
  ASSERT_TRUE(compute.ok());
  ModelContext context;
  context.compute = compute->get();
  auto model = LoadPluginModel(kLibrary, "input_dim=5 hidden=4 classes=3", context);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->name(), "tanh_net");
  EXPECT_EQ((*model)->Variables().size(), 4u);
  ExampleBatch batch;
  batch.size = 3;
  batch.dense =
      std::move(Tensor::FromValues<float>(Shape({3, 5}), testing_util::RandomValues(15, -1, 1, 9)))
          .value();
  batch.labels = {2, 0, 1};
  EXPECT_TRUE(testing_util::ModelGradientsMatch(model->get(), batch));

  auto refused = LoadPluginModel(kLibrary, "hidden=4", context);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("input_dim and classes"), std::string::npos);
}

TEST(TanhNetPluginTest, TrainsFromAJobSpec) {
  const std::string dir = testing_util::WriteToyImageDataset(300, 90);
  JobSpec spec;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      absl::StrCat(R"(
    model { plugin { library_path: ")",
                   kLibrary, R"(" config: "input_dim=36 hidden=8 classes=3" } }
    train_data { fashion_mnist { dir: ")",
                   dir, R"(" } batch_size: 20 epochs: 4 }
    eval_data { fashion_mnist { dir: ")",
                   dir, R"(" } batch_size: 30 }
    optimizer { adam {} learning_rate: 0.02 }
    checkpoint { model_dir: "/tmp/unused" }
    eval { metrics: ["loss", "accuracy"] }
  )"),
      &spec));
  auto trainer = LocalTrainer::Create(spec, {});
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->global_step, 60);
  EXPECT_GE(result->eval_metrics.at("accuracy"), 0.95);
}

}  // namespace
}  // namespace pstrain
