#include "client/export/checkpoint_export.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/file_path.h"
#include "common/export/checkpoint_loader.h"
#include "common/export/export_writer.h"
#include "common/export/model_parameters.h"
#include "common/model/job_model.h"
#include "common/status/status_macros.h"
#include "common/summary/file_summary_writer.h"
#include "common/summary/scalar_jsonl.h"

namespace pstrain {
namespace {

// "100, 200, 300" or "none".
absl::StatusOr<std::string> ListedSteps(Env& env, const std::string& model_dir) {
  ASSIGN_OR_RETURN(const std::vector<CheckpointRef> checkpoints, ListCheckpoints(env, model_dir));
  if (checkpoints.empty()) return std::string("none");
  return absl::StrJoin(checkpoints, ", ", [](std::string* out, const CheckpointRef& checkpoint) {
    absl::StrAppend(out, checkpoint.step);
  });
}

}  // namespace

absl::StatusOr<VerifiedCheckpoint> SelectCheckpoint(Env& env, const std::string& model_dir,
                                                    std::optional<int64_t> step,
                                                    std::vector<SkippedCheckpoint>* skipped) {
  ASSIGN_OR_RETURN(const bool exists, PathExists(env, model_dir));
  if (!exists) return absl::NotFoundError(absl::StrCat("model_dir ", model_dir, " does not exist"));
  if (step.has_value()) {
    const std::string dir = CheckpointDir(model_dir, *step);
    absl::StatusOr<CheckpointManifest> manifest = VerifyCheckpoint(env, dir);
    if (absl::IsNotFound(manifest.status())) {
      ASSIGN_OR_RETURN(const bool folder_exists, PathExists(env, dir));
      if (folder_exists) {
        return absl::NotFoundError(
            absl::StrCat("checkpoint ", dir, " is incomplete: ", manifest.status().message()));
      }
      ASSIGN_OR_RETURN(const std::string steps, ListedSteps(env, model_dir));
      return absl::NotFoundError(absl::StrCat(model_dir, " has no checkpoint of step ", *step,
                                              "; its checkpoints are of steps: ", steps));
    }
    if (!manifest.ok()) return manifest.status();
    return VerifiedCheckpoint{*step, dir, *std::move(manifest)};
  }
  ASSIGN_OR_RETURN(RestorableCheckpointSearch search, FindRestorableCheckpoint(env, model_dir));
  if (skipped != nullptr) *skipped = search.skipped;
  if (!search.checkpoint.has_value()) {
    std::string reasons;
    for (const SkippedCheckpoint& bad : search.skipped) {
      absl::StrAppend(&reasons, "; ", bad.path, ": ", bad.reason.message());
    }
    return absl::NotFoundError(absl::StrCat(
        model_dir, " holds no complete checkpoint (ckpt-<step>/ with a MANIFEST)", reasons));
  }
  return *std::move(search.checkpoint);
}

std::map<std::string, double> RecordedEvalMetrics(Env& env, const std::string& model_dir,
                                                  int64_t step) {
  ScalarJsonlReadOptions options;
  options.allow_truncated_tail = true;  // an evaluator may be writing it
  absl::StatusOr<std::vector<ScalarRecord>> records =
      ReadScalarJsonl(env, JoinPath(EvalSummaryDir(model_dir), kScalarJsonlFileName), options);
  std::map<std::string, double> metrics;
  if (!records.ok()) return metrics;
  // A step evaluated twice (an evaluator restarted) keeps its last values.
  for (const ScalarRecord& record : *records) {
    if (record.step == step) metrics[record.tag] = record.value;
  }
  return metrics;
}

absl::StatusOr<CheckpointExport> ExportCheckpoint(Env& env, const std::string& model_dir,
                                                  std::optional<int64_t> step,
                                                  const std::string& export_dir) {
  ASSIGN_OR_RETURN(const bool taken, PathExists(env, export_dir));
  if (taken) {
    return absl::AlreadyExistsError(
        absl::StrCat(export_dir, " exists already; an export is never written over"));
  }
  CheckpointExport result;
  ASSIGN_OR_RETURN(VerifiedCheckpoint checkpoint,
                   SelectCheckpoint(env, model_dir, step, &result.skipped));
  const JobSpec& spec = checkpoint.manifest.spec();
  if (!spec.has_model()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the MANIFEST of ", checkpoint.path, " holds no job spec, so its model cannot be rebuilt"));
  }
  ExportSource source;
  source.spec = spec;
  absl::StatusOr<DatasetInfo> dataset = ModelSizingInfo(spec);
  if (!dataset.ok()) {
    // The checkpoint is fine; what is missing is the data the spec names.
    return absl::FailedPreconditionError(dataset.status().message());
  }
  source.dataset = *dataset;
  source.global_step = checkpoint.step;
  source.job_id = checkpoint.manifest.job_id();
  source.metrics = RecordedEvalMetrics(env, model_dir, checkpoint.step);
  source.source_checkpoint = checkpoint.path;

  ASSIGN_OR_RETURN(JobModel model, CreateJobModel(spec, source.dataset));
  ASSIGN_OR_RETURN(std::unique_ptr<ModelParameters> parameters,
                   ModelParameters::Create(model.model->Variables(), spec.training().seed()));
  RETURN_IF_ERROR(
      LoadCheckpointParameters(env, checkpoint.path, checkpoint.manifest, parameters.get()));
  ASSIGN_OR_RETURN(result.manifest,
                   WriteExport(env, export_dir, source, *model.model, *parameters));
  result.step = checkpoint.step;
  result.checkpoint_dir = checkpoint.path;
  result.export_dir = export_dir;
  return result;
}

}  // namespace pstrain
