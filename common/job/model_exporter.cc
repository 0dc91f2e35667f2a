#include "common/job/model_exporter.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/config/job_spec_defaults.h"
#include "common/export/export_manifest.h"
#include "common/export/export_versions.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

std::string ExportDir(const JobSpec& spec) {
  if (!spec.export_().export_dir().empty()) return spec.export_().export_dir();
  return JoinPath(spec.checkpoint().model_dir(), "export");
}

}  // namespace

ModelExporter::ModelExporter(Env& env, const JobSpec& spec)
    : env_(env),
      strategy_(ExportStrategyOf(spec.export_(), spec.mode())),
      best_metric_(BestMetricOf(spec.eval())),
      minimize_(BestDirectionOf(spec.eval()) == METRIC_DIRECTION_MINIMIZE),
      exports_to_keep_(ExportsToKeepOf(spec.export_())),
      best_dir_(JoinPath(ExportDir(spec), "best")),
      final_dir_(JoinPath(ExportDir(spec), "final")) {}

absl::StatusOr<std::unique_ptr<ModelExporter>> ModelExporter::Create(Env& env,
                                                                     const JobSpec& spec) {
  std::unique_ptr<ModelExporter> exporter(new ModelExporter(env, spec));
  if (exporter->strategy_ != EXPORT_STRATEGY_BEST) return exporter;
  ASSIGN_OR_RETURN(const std::vector<ExportVersion> versions,
                   ListExportVersions(env, exporter->best_dir_));
  if (versions.empty()) return exporter;
  absl::StatusOr<ExportManifest> newest = ReadExportManifest(env, versions.back().path);
  if (!newest.ok()) {
    LOG(WARNING) << "the best export so far cannot be read, so any evaluation will beat it: "
                 << newest.status();
    return exporter;
  }
  auto found = newest->metrics().find(exporter->best_metric_);
  if (found != newest->metrics().end() && !std::isnan(found->second)) {
    exporter->best_value_ = found->second;
    LOG(INFO) << "best " << exporter->best_metric_ << " so far " << found->second << " (export "
              << versions.back().path << ")";
  }
  return exporter;
}

bool ModelExporter::IsImprovement(const std::map<std::string, double>& metrics) const {
  auto found = metrics.find(best_metric_);
  if (found == metrics.end() || std::isnan(found->second)) return false;
  if (!best_value_) return true;
  return minimize_ ? found->second < *best_value_ : found->second > *best_value_;
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
                   RemoveOldExportVersions(env_, parent, exports_to_keep_));
  for (const std::string& path : removed) LOG(INFO) << "removed old export " << path;
  return dir;
}

absl::StatusOr<ExportResult> ModelExporter::Export(const ExportSource& source, const Model& model,
                                                   const ModelParameters& parameters, bool final) {
  ExportResult result;
  if (strategy_ == EXPORT_STRATEGY_BEST && IsImprovement(source.metrics)) {
    ASSIGN_OR_RETURN(result.best_path, WriteVersion(best_dir_, source, model, parameters));
    best_value_ = source.metrics.at(best_metric_);
  }
  if (final && (strategy_ == EXPORT_STRATEGY_BEST || strategy_ == EXPORT_STRATEGY_FINAL)) {
    ASSIGN_OR_RETURN(result.final_path, WriteVersion(final_dir_, source, model, parameters));
  }
  return result;
}

}  // namespace pstrain
