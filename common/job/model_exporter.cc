#include "common/job/model_exporter.h"

#include <utility>
#include <vector>

#include "common/export/export_manifest.h"
#include "common/export/export_versions.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {

absl::StatusOr<std::unique_ptr<ModelExporter>> ModelExporter::Create(Env& env,
                                                                     const JobSpec& spec) {
  std::unique_ptr<ModelExporter> exporter(new ModelExporter(env, spec));
  ExportPolicy& policy = exporter->policy_;
  if (policy.strategy() != EXPORT_STRATEGY_BEST) return exporter;
  ASSIGN_OR_RETURN(const std::vector<ExportVersion> versions,
                   ListExportVersions(env, policy.best_dir()));
  if (versions.empty()) return exporter;
  absl::StatusOr<ExportManifest> newest = ReadExportManifest(env, versions.back().path);
  if (!newest.ok()) {
    LOG(WARNING) << "the best export so far cannot be read, so any evaluation will beat it: "
                 << newest.status();
    return exporter;
  }
  policy.RecordBest({newest->metrics().begin(), newest->metrics().end()});
  if (policy.best_value().has_value()) {
    LOG(INFO) << "best " << policy.best_metric() << " so far " << *policy.best_value()
              << " (export " << versions.back().path << ")";
  }
  return exporter;
}

absl::StatusOr<std::string> ModelExporter::WriteVersion(const std::string& parent,
                                                        const ExportSource& source,
                                                        const Model& model,
                                                        const ModelParameters& parameters) {
  const std::string dir = ExportVersionDir(parent, source.global_step);
  absl::StatusOr<ExportManifest> written = WriteExport(env_, dir, source, model, parameters);
  if (absl::IsAlreadyExists(written.status())) {
    LOG(INFO) << "export " << dir << " exists already";
  } else if (!written.ok()) {
    return written.status();
  } else {
    LOG(INFO) << "exported step " << source.global_step << " to " << dir;
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> removed,
                   RemoveOldExportVersions(env_, parent, policy_.exports_to_keep()));
  for (const std::string& path : removed) LOG(INFO) << "removed old export " << path;
  return dir;
}

absl::StatusOr<ExportResult> ModelExporter::Export(const ExportSource& source, const Model& model,
                                                   const ModelParameters& parameters,
                                                   CheckpointKind kind) {
  const ExportChoice choice = policy_.Choose(source.metrics, kind);
  ExportResult result;
  if (choice.best) {
    ASSIGN_OR_RETURN(result.best_path,
                     WriteVersion(policy_.best_dir(), source, model, parameters));
    policy_.RecordBest(source.metrics);
  }
  if (choice.final) {
    ASSIGN_OR_RETURN(result.final_path,
                     WriteVersion(policy_.final_dir(), source, model, parameters));
  }
  return result;
}

}  // namespace pstrain
