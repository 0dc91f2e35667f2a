#ifndef PSTRAIN_COMMON_EXPORT_EXPORTED_MODEL_H_
#define PSTRAIN_COMMON_EXPORT_EXPORTED_MODEL_H_

// Loading an exported model (common/export/export_writer.h) for prediction:
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ExportedModel> model,
//                    LoadExportedModel("/models/run1/export/best"));
//   ASSIGN_OR_RETURN(std::vector<float> p, model->Predict(batch));

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/data/dataset_info.h"
#include "common/data/example_batch.h"
#include "common/export/export_manifest.pb.h"
#include "common/export/model_parameters.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/model.h"
#include "protos/job.pb.h"

namespace pstrain {

struct LoadExportOptions {
  // oneDNN threads for Predict. Default 1.
  int compute_threads = 1;
  // What embedding rows the export does not hold (ids never trained) read
  // as. The default is what model.onnx does too.
  UnstoredRows unstored_rows = UnstoredRows::kZeroInDynamicTables;
};

// A model rebuilt from an export: the model the spec names, with the
// exported weights. Compute runs on the thread that loaded it (its oneDNN
// context is set up there): call Predict on that thread. Not thread-safe.
class ExportedModel {
 public:
  ExportedModel(const ExportedModel&) = delete;
  ExportedModel& operator=(const ExportedModel&) = delete;

  // Predictions for `batch`, [batch.size, prediction_width()] row-major: the
  // class probabilities, P(label = 1), or the predicted value
  // (prediction_kind()). Labels may be left empty.
  // InvalidArgument: a batch the model cannot read (feature width, sparse
  // ids out of range), or labels of the wrong count.
  absl::StatusOr<std::vector<float>> Predict(const ExampleBatch& batch);

  PredictionKind prediction_kind() const { return model_->prediction_kind(); }
  int64_t prediction_width() const { return model_->prediction_width(); }

  const JobSpec& spec() const { return spec_; }
  const DatasetInfo& dataset() const { return dataset_; }
  const ExportManifest& manifest() const { return manifest_; }
  int64_t global_step() const { return manifest_.global_step(); }
  // The folder loaded (a version folder when a parent was given).
  const std::string& path() const { return path_; }
  Model& model() { return *model_; }
  ModelParameters& parameters() { return *parameters_; }

 private:
  friend absl::StatusOr<std::unique_ptr<ExportedModel>> LoadExportedModel(
      Env& env, const std::string& dir, const LoadExportOptions& options);
  ExportedModel() = default;

  std::string path_;
  ExportManifest manifest_;
  JobSpec spec_;
  DatasetInfo dataset_;
  std::unique_ptr<ComputeContext> compute_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<ModelParameters> parameters_;
  ParameterView view_;
  ModelOutput output_;
};

// Loads the export at `dir`: an export folder, or a folder of versions
// (export_dir/best), of which the newest complete one is loaded. Every file
// is checked against the MANIFEST's size and CRC32C before use.
// NotFound: no export at `dir` (no MANIFEST, and no version holding one).
// DataLoss: a damaged export: the MANIFEST fails its checksum, or a file it
//   lists is missing, has another size or CRC32C, or does not decode (the
//   message names the file).
// FailedPrecondition: a newer export format; or the model the spec builds
//   declares other variables than the export holds (names, kinds, shapes),
//   as when a plug-in library changed.
// The model factory's errors (a plug-in library that cannot be loaded).
absl::StatusOr<std::unique_ptr<ExportedModel>> LoadExportedModel(
    Env& env, const std::string& dir, const LoadExportOptions& options = {});

// The same through the local filesystem.
absl::StatusOr<std::unique_ptr<ExportedModel>> LoadExportedModel(
    const std::string& dir, const LoadExportOptions& options = {});

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_EXPORTED_MODEL_H_
