#include "common/model/plugin_model_loader.h"

#include <memory>
#include <string>

#include "common/model/dnnl/compute_context.h"
#include "common/model/model_gradient_check.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

// Test libraries, relative to the test's runfiles folder (its working
// directory).
constexpr char kConfigurable[] = "common/model/testdata/libconfigurable_plugin.so";
constexpr char kFutureAbi[] = "common/model/testdata/libfuture_abi_plugin.so";
constexpr char kNoEntryPoint[] = "common/model/testdata/libno_entry_point_plugin.so";

class PluginModelLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto compute = ComputeContext::Create();
    ASSERT_TRUE(compute.ok());
    compute_ = std::move(compute).value();
    context_.compute = compute_.get();
  }
  std::unique_ptr<ComputeContext> compute_;
  ModelContext context_;
};

TEST_F(PluginModelLoaderTest, LoadsAWorkingModel) {
  auto model = LoadPluginModel(kConfigurable, "ok", context_);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->name(), "linear_regression");
  EXPECT_EQ((*model)->Variables().size(), 2u);
  ExampleBatch batch;
  batch.size = 2;
  batch.dense = std::move(Tensor::FromValues<float>(Shape({2, 3}), {1, 2, 3, -1, 0, 1})).value();
  batch.labels = {1, -2};
  EXPECT_TRUE(testing_util::ModelGradientsMatch(model->get(), batch));
  // Two models from one library, each keeping it loaded.
  auto second = LoadPluginModel(kConfigurable, "ok", context_);
  ASSERT_TRUE(second.ok());
  model->reset();
  EXPECT_EQ((*second)->prediction_width(), 1);
}

TEST_F(PluginModelLoaderTest, MissingFile) {
  auto model = LoadPluginModel("/nonexistent/libmodel.so", "", context_);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(model.status().message().find("/nonexistent/libmodel.so"), std::string::npos);
}

TEST_F(PluginModelLoaderTest, NotASharedLibrary) {
  auto model = LoadPluginModel("common/model/plugin_model_loader_test.cc", "", context_);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument) << model.status();
  EXPECT_NE(model.status().message().find("cannot be loaded"), std::string::npos);
}

TEST_F(PluginModelLoaderTest, MissingEntryPoint) {
  auto model = LoadPluginModel(kNoEntryPoint, "", context_);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(model.status().message().find("does not export pstrain_create_model"),
            std::string::npos)
      << model.status();
}

TEST_F(PluginModelLoaderTest, WrongAbiVersion) {
  auto model = LoadPluginModel(kFutureAbi, "", context_);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(model.status().message().find("built for plug-in ABI version 999"), std::string::npos)
      << model.status();
}

TEST_F(PluginModelLoaderTest, FactoryErrors) {
  auto model = LoadPluginModel(kConfigurable, "nope", context_);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(model.status().message().find("config must be \"ok\""), std::string::npos)
      << model.status();
}

}  // namespace
}  // namespace pstrain
