#ifndef PSTRAIN_COMMON_JOB_MODEL_EXPORTER_H_
#define PSTRAIN_COMMON_JOB_MODEL_EXPORTER_H_

// The exports of one job, written as its ExportPolicy says (best/<step> and
// final/<step> under export_dir, each an export folder of
// common/export/export_writer.h, the newest of each the current model:
// LoadExportedModel of <export_dir>/best loads it; exports_to_keep bounds
// each folder). The evaluator of a cluster and train-local both export
// through it, so a job leaves the same exports whoever trains it.
// Thread-compatible.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/export/export_writer.h"
#include "common/export/model_parameters.h"
#include "common/job/checkpoint_kind.h"
#include "common/job/export_policy.h"
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
  // <export_dir>/best, so a restarted evaluator (or a job resumed, or
  // trained again, into the same export_dir) only exports what beats it.
  // The Env's errors listing <export_dir>/best.
  static absl::StatusOr<std::unique_ptr<ModelExporter>> Create(Env& env, const JobSpec& spec);

  // Exports `parameters` of the checkpoint `source` describes, evaluated
  // with `source.metrics`, with `model` (theirs; it describes model.onnx),
  // as the policy chooses: best/<step> on an improvement, final/<step> of
  // the final checkpoint (`kind`). A version that already exists counts as written (same
  // checkpoint, same weights). Then removes versions beyond
  // exports_to_keep. Errors of WriteExport and of the Env.
  absl::StatusOr<ExportResult> Export(const ExportSource& source, const Model& model,
                                      const ModelParameters& parameters, CheckpointKind kind);

  const ExportPolicy& policy() const { return policy_; }

 private:
  ModelExporter(Env& env, const JobSpec& spec) : env_(env), policy_(spec) {}
  absl::StatusOr<std::string> WriteVersion(const std::string& parent, const ExportSource& source,
                                           const Model& model, const ModelParameters& parameters);

  Env& env_;
  ExportPolicy policy_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_JOB_MODEL_EXPORTER_H_
