// A model whose weights exceed protobuf's 2 GB: a wide-and-deep model with
// a fixed table of 40 million rows of 16 floats (2.56 GB). Its model.onnx
// keeps the table in model.onnx.data, passes the checker, and ONNX Runtime
// serves it with pstrain predict's results. Manual (bazel test
// //tests/onnx:onnx_large_table_test): it writes and reads 2.6 GB and needs
// about 3 GB of memory.

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/data/synthetic_clicks.h"
#include "common/export/export_manifest.h"
#include "common/export/export_writer.h"
#include "common/export/exported_model.h"
#include "common/export/testing/trained_model.h"
#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "tests/onnx/onnx_runtime.h"

namespace pstrain {
namespace {

constexpr int64_t kRows = 40'000'000;

TEST(OnnxLargeTableTest, WeightsOverTwoGigabytesGoToExternalData) {
  const std::string clicks =
      "synthetic_clicks { num_examples: 4000 num_fields: 8 vocabulary_per_field: 500 seed: 11 }";
  auto raw = ParseJobSpecText(absl::StrCat(
      "model { wide_and_deep { embedding { vocabulary_size: ", kRows,
      " dim: 16 } hidden_units: [16] } } train_data { ", clicks, " batch_size: 64 } eval_data { ",
      clicks, " batch_size: 64 } optimizer { adagrad {} learning_rate: 0.1 } training { seed: 3 } ",
      "stop { max_steps: 50 } checkpoint { model_dir: \"/tmp/unused\" }"));
  ASSERT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  ASSERT_TRUE(spec.ok()) << spec.status();
  testing_util::TrainedModel trained = testing_util::TrainModel(*spec, 50);

  PosixEnv env;
  const std::string dir = JoinPath(::testing::TempDir(), "large_export");
  const absl::Time start = absl::Now();
  auto manifest = WriteExport(env, dir, testing_util::ExportSourceOf(trained, *spec, 50),
                              trained.trainer->model(), *trained.parameters);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  std::cout << "export: " << absl::Now() - start << ", model.onnx "
            << manifest->onnx_model().bytes() << " bytes, model.onnx.data "
            << manifest->onnx_data().bytes() << " bytes\n";
  ASSERT_TRUE(manifest->has_onnx_data());
  EXPECT_GT(manifest->onnx_data().bytes(), int64_t{2} << 30);
  EXPECT_LT(manifest->onnx_model().bytes(), int64_t{1} << 30);
  const std::string path = JoinPath(dir, kExportOnnxFileName);
  try {
    onnx::checker::check_model(path);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }

  auto model = LoadExportedModel(dir);
  ASSERT_TRUE(model.ok()) << model.status();
  auto test = SyntheticClicks::Create(spec->eval_data().synthetic_clicks(), /*test=*/true);
  ASSERT_TRUE(test.ok()) << test.status();
  std::vector<int64_t> all(1000);
  for (int64_t i = 0; i < 1000; ++i) all[i] = i;
  ExampleBatch batch;
  ASSERT_TRUE((*test)->Fill(all, &batch).ok());
  auto predicted = (*model)->Predict(batch);
  ASSERT_TRUE(predicted.ok()) << predicted.status();
  std::vector<float> values(batch.sparse_ids.size(), 1.0f);
  const int64_t fields = batch.row_splits[1];
  const absl::Time served = absl::Now();
  auto outputs = RunInOnnxRuntime(
      path, {{"sparse_ids", OnnxTensor::Int64({batch.size, fields}, batch.sparse_ids)},
             {"sparse_values", OnnxTensor::Float({batch.size, fields}, values)}});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  std::cout << "ONNX Runtime load and run: " << absl::Now() - served << "\n";
  const std::vector<float>& got = outputs->at("predictions").floats;
  ASSERT_EQ(got.size(), predicted->size());
  for (size_t i = 0; i < got.size(); ++i) {
    const float difference = std::abs(got[i] - (*predicted)[i]);
    EXPECT_TRUE(difference <= 1e-5f || difference <= 1e-5f * std::abs((*predicted)[i])) << i;
  }
}

}  // namespace
}  // namespace pstrain
