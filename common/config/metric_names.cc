#include "common/config/metric_names.h"

#include "absl/algorithm/container.h"

namespace pstrain {
namespace {

constexpr absl::string_view kMetricNames[] = {
    "loss", "accuracy", "top_k_accuracy", "auc", "precision", "recall", "mse",
};

}  // namespace

absl::Span<const absl::string_view> KnownMetricNames() { return kMetricNames; }

bool IsKnownMetricName(absl::string_view name) { return absl::c_linear_search(kMetricNames, name); }

MetricDirection DefaultMetricDirection(absl::string_view name) {
  if (name == "loss" || name == "mse") return METRIC_DIRECTION_MINIMIZE;
  if (IsKnownMetricName(name)) return METRIC_DIRECTION_MAXIMIZE;
  return METRIC_DIRECTION_UNSPECIFIED;
}

}  // namespace pstrain
