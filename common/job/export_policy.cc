#include "common/job/export_policy.h"

#include <cmath>

#include "common/checkpoint/file_path.h"
#include "common/config/job_spec_defaults.h"

namespace pstrain {
namespace {

std::string ExportDir(const JobSpec& spec) {
  if (!spec.export_().export_dir().empty()) return spec.export_().export_dir();
  return JoinPath(spec.checkpoint().model_dir(), "export");
}

// The value of `metric` in `metrics` when it can rank a checkpoint.
std::optional<double> RankingValue(const std::map<std::string, double>& metrics,
                                   const std::string& metric) {
  auto found = metrics.find(metric);
  if (found == metrics.end() || std::isnan(found->second)) return std::nullopt;
  return found->second;
}

}  // namespace

ExportPolicy::ExportPolicy(const JobSpec& spec)
    : strategy_(ExportStrategyOf(spec.export_(), spec.mode())),
      best_metric_(BestMetricOf(spec.eval())),
      direction_(BestDirectionOf(spec.eval())),
      exports_to_keep_(ExportsToKeepOf(spec.export_())),
      best_dir_(JoinPath(ExportDir(spec), "best")),
      final_dir_(JoinPath(ExportDir(spec), "final")) {}

bool ExportPolicy::IsImprovement(const std::map<std::string, double>& metrics) const {
  const std::optional<double> value = RankingValue(metrics, best_metric_);
  if (!value.has_value()) return false;
  if (!best_value_.has_value()) return true;
  return direction_ == METRIC_DIRECTION_MINIMIZE ? *value < *best_value_ : *value > *best_value_;
}

ExportChoice ExportPolicy::Choose(const std::map<std::string, double>& metrics,
                                  CheckpointKind kind) const {
  ExportChoice choice;
  choice.best = strategy_ == EXPORT_STRATEGY_BEST && IsImprovement(metrics);
  choice.final = kind == CheckpointKind::kFinal &&
                 (strategy_ == EXPORT_STRATEGY_BEST || strategy_ == EXPORT_STRATEGY_FINAL);
  return choice;
}

void ExportPolicy::RecordBest(const std::map<std::string, double>& metrics) {
  if (std::optional<double> value = RankingValue(metrics, best_metric_)) best_value_ = *value;
}

}  // namespace pstrain
