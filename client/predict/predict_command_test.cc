#include "client/predict/predict_command.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/predict/batch_prediction.h"
#include "client/predict/prediction_input.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_defaults.h"
#include "common/config/job_spec_parser.h"
#include "common/data/fashion_mnist.h"
#include "common/data/test_files.h"
#include "common/export/export_writer.h"
#include "common/export/exported_model.h"
#include "common/training/local_trainer.h"
#include "gflags/gflags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

DECLARE_string(labels);
DECLARE_string(input_format);
DECLARE_bool(print_predictions);

namespace pstrain {
namespace {

using ::testing::HasSubstr;

// Where a spec reads Fashion-MNIST from by default.
std::string DefaultFashionMnistDir() {
  DataSpec data;
  data.mutable_fashion_mnist();
  FillDataDefaults(&data, PassMode::kTrain);
  return data.fashion_mnist().dir();
}
const std::string kDir = DefaultFashionMnistDir();
const std::string kTestImages = kDir + "/t10k-images-idx3-ubyte.gz";
const std::string kTestLabels = kDir + "/t10k-labels-idx1-ubyte.gz";

// A small MLP trained for a few hundred steps on the real Fashion-MNIST,
// exported once for every test.
class PredictTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto raw = ParseJobSpecText(R"(
      model { mlp { hidden_units: [32] } }
      train_data { fashion_mnist {} batch_size: 128 shuffle_seed: 3 }
      eval_data { fashion_mnist {} batch_size: 1000 }
      optimizer { adam {} learning_rate: 0.003 }
      training { seed: 3 }
      stop { max_steps: 300 }
      checkpoint { model_dir: "/tmp/unused" }
      eval { metrics: ["loss", "accuracy"] }
    )");
    ASSERT_TRUE(raw.ok()) << raw.status();
    auto spec = PrepareJobSpec(*raw);
    ASSERT_TRUE(spec.ok()) << spec.status();
    auto trainer = LocalTrainer::Create(*spec, {});
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    auto trained = (*trainer)->Run();
    ASSERT_TRUE(trained.ok()) << trained.status();
    trained_metrics_ = new std::map<std::string, double>(trained->eval_metrics);
    auto parameters = ModelParameters::Create((*trainer)->model().Variables(), 3);
    ASSERT_TRUE(parameters.ok());
    for (const VariableDef& def : (*parameters)->definitions()) {
      const Tensor* value = (*trainer)->variables().dense(def.spec.name());
      std::memcpy((*parameters)->mutable_dense(def.spec.name())->raw_data(), value->raw_data(),
                  value->num_bytes());
    }
    ExportSource source;
    source.spec = *spec;
    source.dataset = (*trainer)->train_info();
    source.global_step = 300;
    export_dir_ = new std::string(JoinPath(::testing::TempDir(), "fashion_mnist_export"));
    PosixEnv env;
    auto written = WriteExport(env, *export_dir_, source, (*trainer)->model(), **parameters);
    ASSERT_TRUE(written.ok()) << written.status();
  }

  static std::string* export_dir_;
  static std::map<std::string, double>* trained_metrics_;
};

std::string* PredictTest::export_dir_ = nullptr;
std::map<std::string, double>* PredictTest::trained_metrics_ = nullptr;

TEST_F(PredictTest, AccuracyOnTheTestFilesIsTheTrainersOwn) {
  auto model = LoadExportedModel(*export_dir_);
  ASSERT_TRUE(model.ok()) << model.status();
  PredictionInputOptions options;
  options.labels_path = kTestLabels;
  auto input = LoadPredictionInput(kTestImages, options, (*model)->dataset());
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_TRUE(input->has_labels);
  int64_t lines = 0;
  auto summary =
      PredictAll(**model, *input->source, true, 500, [&](const ExamplePrediction& prediction) {
        EXPECT_EQ(prediction.index, lines++);
        EXPECT_GE(prediction.probability, 0.1);
      });
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->examples, 10000);
  EXPECT_EQ(lines, 10000);
  EXPECT_GT(summary->metrics.at("accuracy"), 0.75);
  // The same model and data as the trainer's final evaluation.
  EXPECT_NEAR(summary->metrics.at("accuracy"), trained_metrics_->at("accuracy"), 1e-9);
  EXPECT_NEAR(summary->metrics.at("loss"), trained_metrics_->at("loss"), 1e-4);
  EXPECT_THAT(FormatSummary(*summary), HasSubstr("10000 examples: accuracy 0."));
}

TEST_F(PredictTest, CsvWithAndWithoutLabelsPredictsAsTheImagesDo) {
  auto model = LoadExportedModel(*export_dir_);
  ASSERT_TRUE(model.ok()) << model.status();
  auto test = LoadFashionMnist(kDir, /*test=*/true);
  ASSERT_TRUE(test.ok()) << test.status();
  ExampleBatch batch;
  ASSERT_TRUE((*test)->Fill({0, 1, 2, 3, 4, 5, 6, 7}, &batch).ok());
  std::string labelled = "label";
  for (int c = 0; c < 784; ++c) absl::StrAppend(&labelled, ",p", c);
  labelled += "\n";
  std::string features;
  for (int i = 0; i < batch.size; ++i) {
    std::string row;
    for (int c = 0; c < 784; ++c) {
      absl::StrAppend(&row, c == 0 ? "" : ",",
                      absl::StrFormat("%.9g", batch.dense.data<float>()[i * 784 + c]));
    }
    absl::StrAppend(&labelled, batch.labels[i], ",", row, "\n");
    absl::StrAppend(&features, row, "\n");
  }
  PredictionInputOptions options;
  options.format = DataSpec::kCsv;
  options.has_header = true;
  auto with_labels = LoadPredictionInput(testing_util::WriteTestFile("l.csv", labelled), options,
                                         (*model)->dataset());
  ASSERT_TRUE(with_labels.ok()) << with_labels.status();
  EXPECT_TRUE(with_labels->has_labels);
  options.has_header = false;
  auto without = LoadPredictionInput(testing_util::WriteTestFile("f.csv.gz", features, true),
                                     options, (*model)->dataset());
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_FALSE(without->has_labels);

  auto from_images = (*model)->Predict(batch);
  ASSERT_TRUE(from_images.ok());
  std::vector<int64_t> labelled_classes, unlabelled_classes;
  ASSERT_TRUE(PredictAll(**model, *with_labels->source, true, 3, [&](const ExamplePrediction& p) {
                labelled_classes.push_back(p.predicted_class);
                EXPECT_EQ(p.label, batch.labels[p.index]);
              }).ok());
  auto summary = PredictAll(**model, *without->source, false, 3, [&](const ExamplePrediction& p) {
    unlabelled_classes.push_back(p.predicted_class);
    const float* row = from_images->data() + p.index * 10;
    EXPECT_NEAR(p.probability, row[p.predicted_class], 1e-5);
  });
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(labelled_classes, unlabelled_classes);
  EXPECT_EQ(summary->examples, 8);
  EXPECT_THAT(FormatSummary(*summary), HasSubstr("8 examples; predicted classes"));
}

// A CSV read by the training data's names: the input's columns may come in
// any order, with or without the label, with other columns beside.
TEST(NamedCsvInputTest, ReadsByTheTrainingNamesAndNamesWhatIsLacking) {
  CsvSource trained;
  trained.set_has_header(true);
  trained.set_label("price");
  CsvFill* fill = trained.add_fill_missing();
  fill->set_column("*");
  fill->set_value(-1);
  DatasetInfo info;
  info.dense_dim = 2;
  info.dense_names = {"rooms", "area"};
  PredictionInputOptions options;
  options.format = DataSpec::kCsv;
  options.trained_csv = trained;
  auto unlabelled = LoadPredictionInput(
      testing_util::WriteTestFile("u.csv", "note,area,rooms\nbig,70,\n"), options, info);
  ASSERT_TRUE(unlabelled.ok()) << unlabelled.status();
  EXPECT_FALSE(unlabelled->has_labels);
  ExampleBatch batch;
  ASSERT_TRUE(unlabelled->source->Fill({0}, &batch).ok());
  EXPECT_EQ(std::vector<float>(batch.dense.data<float>(), batch.dense.data<float>() + 2),
            (std::vector<float>{-1, 70}));  // rooms (missing, filled), area
  auto labelled = LoadPredictionInput(
      testing_util::WriteTestFile("l.csv", "rooms,price,area\n3,300,70\n"), options, info);
  ASSERT_TRUE(labelled.ok()) << labelled.status();
  EXPECT_TRUE(labelled->has_labels);
  auto lacking = LoadPredictionInput(testing_util::WriteTestFile("x.csv", "rooms,size\n3,70\n"),
                                     options, info);
  EXPECT_THAT(lacking.status().message(),
              HasSubstr("x.csv:1: the model reads the features area by name, which the header "
                        "lacks; it holds rooms, size"));
}

TEST_F(PredictTest, InputTheModelCannotReadIsRefusedNamingTheFile) {
  auto model = LoadExportedModel(*export_dir_);
  ASSERT_TRUE(model.ok()) << model.status();
  PredictionInputOptions options;
  options.format = DataSpec::kCsv;
  const std::string narrow = testing_util::WriteTestFile("narrow.csv", "1,0.5,0.5\n0,0.1,0.2\n");
  auto input = LoadPredictionInput(narrow, options, (*model)->dataset());
  EXPECT_TRUE(absl::IsInvalidArgument(input.status())) << input.status();
  EXPECT_THAT(input.status().message(), HasSubstr("narrow.csv"));
  EXPECT_THAT(input.status().message(), HasSubstr("the model reads 784"));

  options.format = DataSpec::kFashionMnist;
  options.labels_path = kDir + "/train-labels-idx1-ubyte.gz";  // 60000 labels
  input = LoadPredictionInput(kTestImages, options, (*model)->dataset());
  EXPECT_TRUE(absl::IsInvalidArgument(input.status())) << input.status();
  EXPECT_THAT(input.status().message(), HasSubstr("60000 labels for 10000 images"));
}

TEST(PredictionInputTest, LibsvmLinesCarryLabelsAndIdsBeyondTheModelAreRefused) {
  DatasetInfo model_info;
  model_info.sparse_dim = 10;
  PredictionInputOptions options;
  options.format = DataSpec::kLibsvm;
  auto input = LoadPredictionInput(
      testing_util::WriteTestFile("a.svm", "+1 1:0.5 3:1\n-1 2:1 10:2\n"), options, model_info);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_TRUE(input->has_labels);
  EXPECT_EQ(input->source->num_examples(), 2);
  auto beyond =
      LoadPredictionInput(testing_util::WriteTestFile("b.svm", "1 11:1\n"), options, model_info);
  EXPECT_TRUE(absl::IsInvalidArgument(beyond.status())) << beyond.status();
  EXPECT_THAT(beyond.status().message(), HasSubstr("b.svm:1"));
}

TEST(PredictionInputTest, CriteoLinesAreHashedIntoTheModelsBuckets) {
  DatasetInfo model_info;
  model_info.dense_dim = 13;
  model_info.sparse_dim = 50;
  PredictionInputOptions options;
  options.format = DataSpec::kCriteo;
  const std::string line = "1\t5" + std::string(12, '\t') + "\t68fd1e64" + std::string(25, '\t');
  auto input =
      LoadPredictionInput(testing_util::WriteTestFile("day_0", line + "\n"), options, model_info);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_TRUE(input->has_labels);
  EXPECT_EQ(input->source->info().sparse_dim, 50);
  EXPECT_EQ(input->source->info().num_fields, 26);
  model_info.sparse_dim = 0;  // a model of dense features alone
  EXPECT_THAT(
      LoadPredictionInput(testing_util::WriteTestFile("day_1", line + "\n"), options, model_info)
          .status()
          .message(),
      HasSubstr("the model reads none"));
}

TEST(PredictionInputTest, FormatsFromNames) {
  EXPECT_EQ(*ResolveInputFormat("", "/d/t10k-images-idx3-ubyte.gz"), DataSpec::kFashionMnist);
  EXPECT_EQ(*ResolveInputFormat("auto", "x.csv.gz"), DataSpec::kCsv);
  EXPECT_EQ(*ResolveInputFormat("", "a9a.libsvm"), DataSpec::kLibsvm);
  EXPECT_EQ(*ResolveInputFormat("csv", "whatever.txt"), DataSpec::kCsv);
  EXPECT_EQ(*ResolveInputFormat("criteo", "day_0.gz"), DataSpec::kCriteo);
  auto unknown = ResolveInputFormat("", "data.bin");
  EXPECT_TRUE(absl::IsInvalidArgument(unknown.status()));
  EXPECT_THAT(unknown.status().message(), HasSubstr("--input_format"));
  EXPECT_TRUE(absl::IsInvalidArgument(ResolveInputFormat("parquet", "x").status()));
}

TEST_F(PredictTest, CommandExitCodes) {
  FLAGS_labels = kTestLabels;
  FLAGS_input_format = "";
  EXPECT_EQ(RunPredictCommand({*export_dir_, kTestImages}), 0);
  EXPECT_EQ(RunPredictCommand({*export_dir_}), 2);
  EXPECT_EQ(RunPredictCommand({JoinPath(::testing::TempDir(), "no_export"), kTestImages}), 2);
  EXPECT_EQ(RunPredictCommand({*export_dir_, kDir + "/missing-images-idx3-ubyte.gz"}), 2);
  FLAGS_input_format = "parquet";
  EXPECT_EQ(RunPredictCommand({*export_dir_, kTestImages}), 2);
  FLAGS_input_format = "";
  FLAGS_labels = "";
  const std::string few = testing_util::WriteTestFile("few.csv", std::string(783, '0') + "\n");
  EXPECT_EQ(RunPredictCommand({*export_dir_, few}), 2);  // one column: no features
}

}  // namespace
}  // namespace pstrain
