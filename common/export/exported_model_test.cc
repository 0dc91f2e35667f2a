#include "common/export/exported_model.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_env.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/data/batch_reader.h"
#include "common/data/data_source.h"
#include "common/data/test_files.h"
#include "common/export/export_manifest.h"
#include "common/export/export_versions.h"
#include "common/export/export_writer.h"
#include "common/export/testing/trained_model.h"
#include "common/onnx/onnx_external_data.h"
#include "common/training/local_trainer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using testing_util::ExportSourceOf;
using testing_util::NewTestDir;
using testing_util::TrainedModel;
using testing_util::TrainModel;

// Inverts bit `bit` of the byte at `offset` of `path`.
absl::Status FlipBit(const std::string& path, int64_t offset, int bit = 0) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  if (!file) return absl::NotFoundError(path);
  file.seekg(offset);
  char byte;
  file.read(&byte, 1);
  byte = static_cast<char>(byte ^ (1 << bit));
  file.seekp(offset);
  file.write(&byte, 1);
  return file ? absl::OkStatus() : absl::InternalError(path);
}

JobSpec Spec(const std::string& text) {
  auto raw = ParseJobSpecText(text);
  EXPECT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

JobSpec MlpSpec() {
  const std::string dir = testing_util::WriteToyImageDataset(200, 60);
  return Spec(absl::StrCat(R"(
    model { mlp { hidden_units: [8] } }
    train_data { fashion_mnist { dir: ")",
                           dir, R"(" } batch_size: 20 }
    eval_data { fashion_mnist { dir: ")",
                           dir, R"(" } batch_size: 25 }
    optimizer { adam {} learning_rate: 0.01 }
    training { seed: 5 }
    stop { max_steps: 1000 }
    checkpoint { model_dir: "/tmp/unused" }
  )"));
}

JobSpec WideAndDeepSpec() {
  const std::string clicks =
      "synthetic_clicks { num_examples: 400 num_fields: 4 vocabulary_per_field: 50 seed: 3 }";
  return Spec(absl::StrCat(R"(
    model { wide_and_deep { embedding { vocabulary_size: 200 dim: 4 } hidden_units: [8] } }
    train_data { )",
                           clicks, R"( batch_size: 40 }
    eval_data { )",
                           clicks, R"( batch_size: 50 }
    optimizer { adagrad {} learning_rate: 0.1 }
    training { seed: 4 }
    stop { max_steps: 1000 }
    checkpoint { model_dir: "/tmp/unused" }
  )"));
}

// Every prediction of the exported model on the eval data equals the
// trained model's, bit for bit, with and without labels.
void ExpectSamePredictions(const JobSpec& spec, TrainedModel& trained, ExportedModel& exported) {
  auto source = OpenExampleSource(spec.eval_data(), PassMode::kEval);
  ASSERT_TRUE(source.ok());
  BatchReaderOptions options = BatchReaderOptionsFromSpec(spec.eval_data(), PassMode::kEval);
  options.epochs = 1;
  auto reader = BatchReader::Create(source->get(), options);
  ASSERT_TRUE(reader.ok());
  VariableStore& store = const_cast<VariableStore&>(trained.trainer->variables());
  int batches = 0;
  while (true) {
    absl::StatusOr<ExampleBatch> batch = (*reader)->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    ASSERT_TRUE(batch.ok());
    auto rows = trained.trainer->model().RowsToRead(*batch);
    ASSERT_TRUE(rows.ok());
    ParameterView view;
    ASSERT_TRUE(store.PrepareView(*rows, &view).ok());
    ModelOutput expected;
    ASSERT_TRUE(trained.trainer->model().Forward(view, *batch, PassMode::kEval, &expected).ok());

    auto predicted = exported.Predict(*batch);
    ASSERT_TRUE(predicted.ok()) << predicted.status();
    EXPECT_EQ(*predicted, expected.predictions);
    batch->labels.clear();
    auto unlabelled = exported.Predict(*batch);
    ASSERT_TRUE(unlabelled.ok()) << unlabelled.status();
    EXPECT_EQ(*unlabelled, expected.predictions);
    ++batches;
  }
  EXPECT_GT(batches, 1);
}

TEST(ExportedModelTest, RoundTripGivesIdenticalPredictions) {
  PosixEnv env;
  const JobSpec spec = MlpSpec();
  TrainedModel trained = TrainModel(spec, 15);
  const std::string parent = JoinPath(NewTestDir(env), "export/best");
  auto written = WriteExport(env, ExportVersionDir(parent, 15), ExportSourceOf(trained, spec, 15),
                             trained.trainer->model(), *trained.parameters);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->variables_size(), static_cast<int>(trained.parameters->definitions().size()));

  // The parent folder loads its newest version.
  auto exported = LoadExportedModel(parent);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ((*exported)->path(), ExportVersionDir(parent, 15));
  EXPECT_EQ((*exported)->global_step(), 15);
  EXPECT_EQ((*exported)->manifest().job_id(), "job-1");
  EXPECT_EQ((*exported)->manifest().metrics().at("loss"), 0.5);
  EXPECT_EQ((*exported)->spec().SerializeAsString(), spec.SerializeAsString());
  EXPECT_EQ((*exported)->prediction_kind(), PredictionKind::kClassProbabilities);
  EXPECT_EQ((*exported)->prediction_width(), 3);
  ExpectSamePredictions(spec, trained, **exported);
}

TEST(ExportedModelTest, RoundTripsEmbeddingRows) {
  PosixEnv env;
  const JobSpec spec = WideAndDeepSpec();
  TrainedModel trained = TrainModel(spec, 8);
  const std::string dir = JoinPath(NewTestDir(env), "export");
  ASSERT_TRUE(WriteExport(env, dir, ExportSourceOf(trained, spec, 8), trained.trainer->model(),
                          *trained.parameters)
                  .ok());
  auto exported = LoadExportedModel(env, dir);
  ASSERT_TRUE(exported.ok()) << exported.status();
  for (const VariableDef& def : trained.parameters->definitions()) {
    if (def.spec.kind() != VARIABLE_KIND_EMBEDDING) continue;
    const EmbeddingTableValues* before = trained.parameters->table(def.spec.name());
    const EmbeddingTableValues* after = (*exported)->parameters().table(def.spec.name());
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->SortedIds(), before->SortedIds());
  }
  ExpectSamePredictions(spec, trained, **exported);
}

// A job that trains the PyTorch click model (common/model/onnx/testdata)
// read from `graph`.
JobSpec ClickModelSpec(const std::string& graph) {
  const std::string clicks =
      "synthetic_clicks { num_examples: 400 num_fields: 8 vocabulary_per_field: 1000 seed: 3 }";
  return Spec(absl::StrCat("model { onnx { path: \"", graph, "\" } } train_data { ", clicks,
                           " batch_size: 40 } eval_data { ", clicks, R"( batch_size: 50 }
    optimizer { adam {} learning_rate: 0.01 }
    training { seed: 4 }
    stop { max_steps: 1000 }
    checkpoint { model_dir: "/tmp/unused" })"));
}

constexpr char kClickModel[] = "common/model/onnx/testdata/clicks.onnx";

// An imported model's export holds the graph it was trained from: it loads
// and predicts as trained once the original file is gone, and refuses a
// damaged copy.
TEST(ExportedModelTest, AnImportedModelsExportNeedsNothingOutsideIt) {
  PosixEnv env;
  const std::string root = NewTestDir(env);
  const std::string graph = JoinPath(root, "clicks.onnx");
  std::filesystem::copy_file(kClickModel, graph);
  const JobSpec spec = ClickModelSpec(graph);
  TrainedModel trained = TrainModel(spec, 8);
  const std::string dir = JoinPath(root, "export");
  auto written = WriteExport(env, dir, ExportSourceOf(trained, spec, 8), trained.trainer->model(),
                             *trained.parameters);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->imported_graph().name(), "imported.onnx");
  EXPECT_EQ(written->imported_graph().bytes(), std::filesystem::file_size(graph));
  EXPECT_FALSE(written->has_imported_data());
  std::filesystem::remove(graph);

  auto exported = LoadExportedModel(env, dir);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ((*exported)->spec().model().onnx().path(), JoinPath(dir, "imported.onnx"));
  ExpectSamePredictions(spec, trained, **exported);

  ASSERT_TRUE(FlipBit(JoinPath(dir, "imported.onnx"), 100).ok());
  auto damaged = LoadExportedModel(env, dir);
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss) << damaged.status();
  EXPECT_THAT(std::string(damaged.status().message()), HasSubstr("imported.onnx"));
}

// A graph that keeps its weights in external data files (as graphs over
// 2 GB must) trains; its export gathers them into imported.onnx.data, and
// needs nothing outside its folder either.
TEST(ExportedModelTest, AnImportedGraphsExternalDataIsCopiedIntoTheExport) {
  PosixEnv env;
  const std::string root = NewTestDir(env);
  const std::string folder = JoinPath(root, "model");
  std::filesystem::create_directories(JoinPath(folder, "weights"));
  // As onnx.save_model(..., save_as_external_data=True) writes it, with the
  // data in a folder of its own.
  onnx::ModelProto model;
  std::ifstream source(kClickModel, std::ios::binary);
  ASSERT_TRUE(model.ParseFromIstream(&source));
  std::string data;
  for (onnx::TensorProto& tensor : *model.mutable_graph()->mutable_initializer()) {
    const int64_t offset = static_cast<int64_t>(data.size());
    data += tensor.raw_data();
    SetOnnxExternalLocation(
        {"weights/clicks.bin", offset, static_cast<int64_t>(data.size()) - offset}, &tensor);
  }
  std::ofstream(JoinPath(folder, "weights/clicks.bin"), std::ios::binary) << data;
  const std::string graph = JoinPath(folder, "clicks.onnx");
  std::ofstream graph_file(graph, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&graph_file));
  graph_file.close();

  const JobSpec spec = ClickModelSpec(graph);
  TrainedModel trained = TrainModel(spec, 8);
  const std::string dir = JoinPath(root, "export");
  auto written = WriteExport(env, dir, ExportSourceOf(trained, spec, 8), trained.trainer->model(),
                             *trained.parameters);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->imported_data().name(), "imported.onnx.data");
  EXPECT_EQ(written->imported_data().bytes(), static_cast<int64_t>(data.size()));
  std::filesystem::remove_all(folder);

  auto exported = LoadExportedModel(env, dir);
  ASSERT_TRUE(exported.ok()) << exported.status();
  ExpectSamePredictions(spec, trained, **exported);

  ASSERT_TRUE(FlipBit(JoinPath(dir, "imported.onnx.data"), 7).ok());
  auto damaged = LoadExportedModel(env, dir);
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss) << damaged.status();
  EXPECT_THAT(std::string(damaged.status().message()), HasSubstr("imported.onnx.data"));
}

class DamagedExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = MlpSpec();
    trained_ = TrainModel(spec_, 3);
    dir_ = JoinPath(NewTestDir(env_), "export");
    auto written = WriteExport(env_, dir_, ExportSourceOf(trained_, spec_, 3),
                               trained_.trainer->model(), *trained_.parameters);
    ASSERT_TRUE(written.ok()) << written.status();
    manifest_ = *written;
  }

  // Loading fails with DataLoss naming `file`.
  void ExpectDataLossNaming(const std::string& file) {
    auto loaded = LoadExportedModel(env_, dir_);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << loaded.status();
    EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(JoinPath(dir_, file)));
  }

  PosixEnv env_;
  JobSpec spec_;
  TrainedModel trained_;
  std::string dir_;
  ExportManifest manifest_;
};

TEST_F(DamagedExportTest, BitFlipInWeightsIsRefused) {
  const ExportedFile& weights = manifest_.variables(0).file();
  ASSERT_TRUE(FlipBit(JoinPath(dir_, weights.name()), weights.bytes() / 2, 3).ok());
  ExpectDataLossNaming(weights.name());
}

TEST_F(DamagedExportTest, BitFlipInSpecIsRefused) {
  ASSERT_TRUE(FlipBit(JoinPath(dir_, kExportSpecFileName), 10).ok());
  ExpectDataLossNaming(std::string(kExportSpecFileName));
}

TEST_F(DamagedExportTest, BitFlipInManifestIsRefused) {
  ASSERT_TRUE(FlipBit(JoinPath(dir_, kExportManifestFileName), 7).ok());
  ExpectDataLossNaming(std::string(kExportManifestFileName));
}

TEST_F(DamagedExportTest, MissingOrTruncatedFileIsRefused) {
  const ExportedFile& last = manifest_.variables(manifest_.variables_size() - 1).file();
  ASSERT_TRUE(env_.TruncateFile(JoinPath(dir_, last.name()), last.bytes() - 4).ok());
  ExpectDataLossNaming(last.name());
  ASSERT_TRUE(env_.RemoveFile(JoinPath(dir_, last.name())).ok());
  ExpectDataLossNaming(last.name());
}

TEST_F(DamagedExportTest, NoManifestIsNotAnExport) {
  ASSERT_TRUE(env_.RemoveFile(JoinPath(dir_, kExportManifestFileName)).ok());
  auto loaded = LoadExportedModel(env_, dir_);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound) << loaded.status();
}

TEST(ExportVersionsTest, NewestLoadsOldOnesAreRemovedAndNoneIsOverwritten) {
  PosixEnv env;
  const JobSpec spec = MlpSpec();
  TrainedModel trained = TrainModel(spec, 2);
  const std::string parent = JoinPath(NewTestDir(env), "best");
  for (int64_t step : {10, 200, 30}) {
    ASSERT_TRUE(WriteExport(env, ExportVersionDir(parent, step),
                            ExportSourceOf(trained, spec, step), trained.trainer->model(),
                            *trained.parameters)
                    .ok());
  }
  EXPECT_EQ(WriteExport(env, ExportVersionDir(parent, 30), ExportSourceOf(trained, spec, 30),
                        trained.trainer->model(), *trained.parameters)
                .status()
                .code(),
            absl::StatusCode::kAlreadyExists);
  // A version a crash left half-written is neither listed nor loaded.
  ASSERT_TRUE(env.CreateDir(ExportVersionDir(parent, 5) + ".tmp").ok());
  ASSERT_TRUE(env.CreateDir(ExportVersionDir(parent, 900)).ok());
  auto versions = ListExportVersions(env, parent);
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 3u);
  EXPECT_EQ((*versions)[0].step, 10);
  EXPECT_EQ((*versions)[2].step, 200);
  auto loaded = LoadExportedModel(env, parent);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->global_step(), 200);

  auto removed = RemoveOldExportVersions(env, parent, 2);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, (std::vector<std::string>{ExportVersionDir(parent, 10),
                                                ExportVersionDir(parent, 5) + ".tmp"}));
  versions = ListExportVersions(env, parent);
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].step, 30);

  EXPECT_EQ(LoadExportedModel(env, JoinPath(parent, "none")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseExportVersionName("007"), std::nullopt);
  EXPECT_EQ(ParseExportVersionName("7.tmp"), std::nullopt);
  EXPECT_EQ(ParseExportVersionName("0"), 0);
}

TEST(ExportWriterTest, AFailedWriteLeavesNoExport) {
  PosixEnv posix;
  TestEnv env(&posix);
  const JobSpec spec = MlpSpec();
  TrainedModel trained = TrainModel(spec, 1);
  const std::string dir = JoinPath(NewTestDir(env), "export/7");
  env.FailOn(EnvOp::kRename, "7.tmp", absl::ResourceExhaustedError("disk full"));
  auto written = WriteExport(env, dir, ExportSourceOf(trained, spec, 7), trained.trainer->model(),
                             *trained.parameters);
  EXPECT_EQ(written.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(*PathExists(env, dir));
  EXPECT_FALSE(*PathExists(env, dir + ".tmp"));

  env.ClearFailures();
  env.FailOn(EnvOp::kAppend, kExportManifestFileName.data(), absl::DataLossError("I/O error"));
  written = WriteExport(env, dir, ExportSourceOf(trained, spec, 7), trained.trainer->model(),
                        *trained.parameters);
  EXPECT_EQ(written.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(*PathExists(env, dir));
  env.ClearFailures();
  ASSERT_TRUE(WriteExport(env, dir, ExportSourceOf(trained, spec, 7), trained.trainer->model(),
                          *trained.parameters)
                  .ok());
  EXPECT_TRUE(LoadExportedModel(env, dir).ok());
}

}  // namespace
}  // namespace pstrain
