#ifndef PSTRAIN_COMMON_JOB_MODEL_EXPORTER_H_
#define PSTRAIN_COMMON_JOB_MODEL_EXPORTER_H_

// The evaluator's exports of one job (export.strategy, export_dir,
// exports_to_keep; eval.best_metric and best_direction):
//
//   <export_dir>/best/<step>/    a checkpoint that beat every earlier one on
//                                the best metric (strategy BEST)
//   <export_dir>/final/<step>/   the final checkpoint (strategies BEST and
//                                FINAL)
//
// each an export folder (common/export/export_writer.h), the newest of each
// the current model (LoadExportedModel of <export_dir>/best loads it);
// exports_to_keep bounds each folder. Thread-compatible.

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/export/export_writer.h"
#include "common/export/model_parameters.h"
#include "common/model/model.h"
#include "protos/job.pb.h"

namespace pstrain {

struct ExportResult {
  // The version folders written by this call; empty when none was.
  std::string best_path;
  std::string final_path;
};

class ModelExporter {
 public:
  // `spec` with defaults filled; `env` must outlive the exporter. The best
  // value so far is read back from the newest export under
  // <export_dir>/best, so a restarted evaluator (or a job resumed in the
  // same model_dir) only exports what beats it.
  static absl::StatusOr<std::unique_ptr<ModelExporter>> Create(Env& env, const JobSpec& spec);

  // Whether `metrics` beat the best so far: the best metric is present and
  // not NaN, and strictly better in its direction (or there is no best yet).
  bool IsImprovement(const std::map<std::string, double>& metrics) const;

  // Exports `parameters` of the checkpoint `source` describes, with
  // `model` (theirs; it describes model.onnx), as the strategy says: best/<step> on an improvement,
  // final/<step> when `final`. A version that already exists counts as written (same checkpoint,
  // same weights). Then removes versions beyond exports_to_keep. Errors of WriteExport and of the
  // Env.
  absl::StatusOr<ExportResult> Export(const ExportSource& source, const Model& model,
                                      const ModelParameters& parameters, bool final);

  // The best metric value so far, if any.
  std::optional<double> best_value() const { return best_value_; }
  const std::string& best_dir() const { return best_dir_; }
  const std::string& final_dir() const { return final_dir_; }

 private:
  ModelExporter(Env& env, const JobSpec& spec);
  absl::StatusOr<std::string> WriteVersion(const std::string& parent, const ExportSource& source,
                                           const Model& model, const ModelParameters& parameters);

  Env& env_;
  const ExportStrategy strategy_;
  const std::string best_metric_;
  const bool minimize_;
  const int exports_to_keep_;
  const std::string best_dir_;
  const std::string final_dir_;
  std::optional<double> best_value_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_JOB_MODEL_EXPORTER_H_
