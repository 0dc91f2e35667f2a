#ifndef PSTRAIN_BENCH_SPARSE_PROMETHEUS_SAMPLE_H_
#define PSTRAIN_BENCH_SPARSE_PROMETHEUS_SAMPLE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pstrain {

// The sum of every sample of metric `name` on a Prometheus text page whose
// labels contain `label` (e.g. `variable="deep/embedding"`; empty: every
// series). Histogram and summary series (`name_bucket`, `name_sum`) are
// other names and are not matched.
// NotFound: no such sample on the page (the metric is not exported, or the
// process has not created the series yet). InvalidArgument: a matching
// line whose value is not a number.
absl::StatusOr<double> SumSamples(absl::string_view page, absl::string_view name,
                                  absl::string_view label = "");

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SPARSE_PROMETHEUS_SAMPLE_H_
