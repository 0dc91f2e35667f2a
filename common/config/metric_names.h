#ifndef PSTRAIN_COMMON_CONFIG_METRIC_NAMES_H_
#define PSTRAIN_COMMON_CONFIG_METRIC_NAMES_H_

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "protos/job.pb.h"

namespace pstrain {

// The evaluation metrics a JobSpec may name in eval.metrics, in the order
// error messages list them: loss, accuracy, top_k_accuracy, auc, precision,
// recall, mse.
absl::Span<const absl::string_view> KnownMetricNames();

bool IsKnownMetricName(absl::string_view name);

// Which way is better for `name`: MINIMIZE for loss and mse, MAXIMIZE for the
// other known metrics, UNSPECIFIED for an unknown name.
MetricDirection DefaultMetricDirection(absl::string_view name);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_METRIC_NAMES_H_
