// From a CSV as people keep it to a served model: a header, a text column
// the job skips by name, missing values filled per column, features
// standardised by the training data's statistics, an MLP regressor trained
// on it and exported; then ONNX Runtime, fed the test file's raw values (a
// missing one as NaN), gives what `pstrain predict` gives on the same file,
// within 1e-5 relative.

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/predict/batch_prediction.h"
#include "client/predict/prediction_input.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/data/test_files.h"
#include "common/export/export_manifest.h"
#include "common/export/export_writer.h"
#include "common/export/exported_model.h"
#include "common/export/testing/trained_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/onnx/onnx_runtime.h"

namespace pstrain {
namespace {

constexpr char kHeader[] = "id,district,rooms,area,age,price";
// How the test's missing values are written: each of the reader's
// spellings appears.
constexpr const char* kMissing[] = {"", "NA", "?", "NaN"};

// Houses: price = 40 + 25 rooms + 1.5 area - 0.6 age + noise, in a city of
// four districts; about one field in ten of rooms, area and age missing.
std::string HousesCsv(int rows, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> rooms(1, 6), district(0, 3), missing(0, 9), spelling(0, 3);
  std::uniform_real_distribution<double> area(30, 150), age(0, 80);
  std::normal_distribution<double> noise(0, 10);
  const char* districts[] = {"north", "south", "east", "west"};
  std::string text = absl::StrCat(kHeader, "\n");
  for (int i = 0; i < rows; ++i) {
    const int r = rooms(random);
    const double a = std::round(area(random) * 10) / 10, y = std::round(age(random));
    const double price = 40 + 25 * r + 1.5 * a - 0.6 * y + noise(random);
    // A missing value is filled by the reader (rooms 3, the rest 0); the
    // price follows the true value, as it would in life.
    const auto field = [&](double value) {
      return missing(random) == 0 ? std::string(kMissing[spelling(random)]) : absl::StrCat(value);
    };
    absl::StrAppend(&text, "h", i, ",", districts[district(random)], ",", field(r), ",", field(a),
                    ",", field(y), ",", absl::StrFormat("%.2f", price), "\n");
  }
  return text;
}

// The test file's raw values of the dense features named `names`, [rows,
// names.size()], each missing one NaN: what a caller of model.onnx feeds,
// read without pstrain's reader.
std::vector<float> RawFeatures(const std::string& text, const std::vector<std::string>& names,
                               int64_t* rows) {
  const std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  const std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  std::vector<int> columns;
  for (const std::string& name : names) {
    columns.push_back(
        static_cast<int>(std::find(header.begin(), header.end(), name) - header.begin()));
  }
  std::vector<float> values;
  for (size_t l = 1; l < lines.size(); ++l) {
    const std::vector<std::string> fields = absl::StrSplit(lines[l], ',');
    for (int c : columns) {
      float value = std::nanf("");
      if (!absl::SimpleAtof(fields[c], &value) || std::isnan(value)) value = std::nanf("");
      values.push_back(value);
    }
  }
  *rows = static_cast<int64_t>(lines.size()) - 1;
  return values;
}

double Variance(const std::vector<float>& values) {
  double mean = 0, square = 0;
  for (float v : values) mean += v;
  mean /= values.size();
  for (float v : values) square += (v - mean) * (v - mean);
  return square / values.size();
}

TEST(CsvRegressionParityTest, OnnxRuntimeOnRawCsvValuesGivesPstrainPredictsPrices) {
  const std::string train = testing_util::WriteTestFile("houses_train.csv", HousesCsv(3000, 1));
  const std::string test_text = HousesCsv(400, 2);
  const std::string test = testing_util::WriteTestFile("houses_test.csv", test_text);
  const std::string csv = absl::StrCat(
      "csv { path: \"", train, "\" label: \"price\" ignore: [\"id\", \"district\"] ",
      "fill_missing { column: \"rooms\" value: 3 } fill_missing { column: \"*\" value: 0 } ",
      "standardize: true }");
  auto raw = ParseJobSpecText(absl::StrCat(
      "model { mlp { regression: true hidden_units: [32, 16] } } train_data { ", csv,
      " batch_size: 64 } eval_data { ", csv,
      " batch_size: 64 } optimizer { adam {} learning_rate: 0.01 } training { seed: 5 } "
      "stop { max_steps: 3000 } checkpoint { model_dir: \"/tmp/unused\" }"));
  ASSERT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  ASSERT_TRUE(spec.ok()) << spec.status();
  testing_util::TrainedModel trained = testing_util::TrainModel(*spec, 3000);

  PosixEnv env;
  const std::string dir = JoinPath(testing_util::NewTestDir(env), "export");
  auto manifest = WriteExport(env, dir, testing_util::ExportSourceOf(trained, *spec, 3000),
                              trained.trainer->model(), *trained.parameters);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  ASSERT_TRUE(manifest->has_onnx_model()) << manifest->onnx_omitted();

  // pstrain predict's side: the test file read by the training data's names.
  auto model = LoadExportedModel(dir);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<std::string> names = (*model)->dataset().dense_names;
  EXPECT_EQ(names, (std::vector<std::string>{"rooms", "area", "age"}));
  // The training file's statistics, carried into the export: areas lie in
  // [30, 150] (mean near 90), ages in [0, 80].
  ASSERT_EQ((*model)->dataset().dense_mean.size(), 3u);
  EXPECT_NEAR((*model)->dataset().dense_mean[1], 81, 10);  // a tenth are 0, filled
  EXPECT_GT((*model)->dataset().dense_scale[1], 0.01f);
  EXPECT_LT((*model)->dataset().dense_scale[1], 0.05f);
  PredictionInputOptions options;
  options.format = DataSpec::kCsv;
  options.trained_csv = (*model)->spec().train_data().csv();
  auto input = LoadPredictionInput(test, options, (*model)->dataset());
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_TRUE(input->has_labels);
  std::vector<int64_t> all(input->source->num_examples());
  for (int64_t i = 0; i < static_cast<int64_t>(all.size()); ++i) all[i] = i;
  ExampleBatch batch;
  ASSERT_TRUE(input->source->Fill(all, &batch).ok());
  auto predicted = (*model)->Predict(batch);
  ASSERT_TRUE(predicted.ok()) << predicted.status();
  auto summary = PredictAll(**model, *input->source, /*has_labels=*/true, 256, nullptr);
  ASSERT_TRUE(summary.ok()) << summary.status();
  // It learned prices: well under the spread of the test prices.
  EXPECT_LT(summary->metrics.at("mse"), 0.2 * Variance(batch.labels)) << FormatSummary(*summary);

  // ONNX Runtime's side, on the raw values.
  int64_t rows = 0;
  std::vector<float> raw_values = RawFeatures(test_text, names, &rows);
  ASSERT_EQ(rows, batch.size);
  int64_t missing = 0;
  for (float v : raw_values) missing += std::isnan(v);
  EXPECT_GT(missing, 50);  // the fills are exercised
  auto outputs = RunInOnnxRuntime(
      JoinPath(dir, kExportOnnxFileName),
      {{"dense", OnnxTensor::Float({rows, static_cast<int64_t>(names.size())}, raw_values)}});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  const OnnxTensor& served = outputs->at("predictions");
  ASSERT_EQ(served.dims, (std::vector<int64_t>{rows, 1}));
  double worst = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const double expected = (*predicted)[i], got = served.floats[i];
    worst = std::max(worst, std::abs(got - expected) / std::max(1.0, std::abs(expected)));
  }
  EXPECT_LT(worst, 1e-5) << "largest relative difference";
  std::cout << rows << " houses (" << missing << " missing values): pstrain predict "
            << FormatSummary(*summary) << " (price variance " << Variance(batch.labels)
            << "); ONNX Runtime on the raw values within " << worst << " relative\n";
}

}  // namespace
}  // namespace pstrain
