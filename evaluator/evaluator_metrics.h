#ifndef PSTRAIN_EVALUATOR_EVALUATOR_METRICS_H_
#define PSTRAIN_EVALUATOR_EVALUATOR_METRICS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace pstrain {
namespace evaluator {

// The evaluator's Prometheus metrics, every name prefixed
// `pstrain_evaluator_`. Registered once in the process's registry, which
// must outlive this object. Thread-safe.
class EvaluatorMetrics {
 public:
  explicit EvaluatorMetrics(prometheus::Registry& registry);

  EvaluatorMetrics(const EvaluatorMetrics&) = delete;
  EvaluatorMetrics& operator=(const EvaluatorMetrics&) = delete;

  // One checkpoint dealt with: status is "evaluated", "missing_checkpoint",
  // "no_new_checkpoint" or "failed". Evaluated ones also set the gauges of
  // the last metrics, step and examples.
  void RecordEvaluation(absl::string_view status, int64_t step, absl::Duration duration,
                        int64_t examples, const std::map<std::string, double>& metrics);
  // A checkpoint not evaluated; reason: "throttled", "already_evaluated",
  // "older_than_evaluated", "missing_checkpoint", "abandoned".
  void RecordSkipped(absl::string_view reason);
  // kind: "best" or "final".
  void RecordExport(absl::string_view kind);

 private:
  prometheus::Family<prometheus::Counter>& evaluations_;
  prometheus::Histogram& duration_;
  prometheus::Counter& examples_;
  prometheus::Gauge& last_step_;
  prometheus::Family<prometheus::Gauge>& metric_;
  prometheus::Family<prometheus::Counter>& skipped_;
  prometheus::Family<prometheus::Counter>& exports_;

  // prometheus-cpp's Family::Add is thread-safe; this keeps the per-metric
  // gauges found once.
  absl::Mutex mu_;
  std::map<std::string, prometheus::Gauge*> metric_gauges_ ABSL_GUARDED_BY(mu_);
};

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_EVALUATOR_METRICS_H_
