#include "evaluator/evaluator_metrics.h"

namespace pstrain {
namespace evaluator {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

// 10 ms .. ~1.4 h, doubling: a toy evaluation to a full test set on one
// thread.
Histogram::BucketBoundaries DurationBuckets() {
  Histogram::BucketBoundaries b;
  for (double s = 0.01; s < 6000; s *= 2) b.push_back(s);
  return b;
}

}  // namespace

EvaluatorMetrics::EvaluatorMetrics(prometheus::Registry& registry)
    : evaluations_(BuildCounter()
                       .Name("pstrain_evaluator_evaluations_total")
                       .Help("Checkpoints dealt with, by the status reported to the coordinator.")
                       .Register(registry)),
      duration_(BuildHistogram()
                    .Name("pstrain_evaluator_evaluation_duration_seconds")
                    .Help("Time to verify, load, evaluate and export one checkpoint.")
                    .Register(registry)
                    .Add({}, DurationBuckets())),
      examples_(BuildCounter()
                    .Name("pstrain_evaluator_examples_total")
                    .Help("Evaluation examples run through the model.")
                    .Register(registry)
                    .Add({})),
      last_step_(BuildGauge()
                     .Name("pstrain_evaluator_last_evaluated_step")
                     .Help("Global step of the checkpoint evaluated last.")
                     .Register(registry)
                     .Add({})),
      metric_(BuildGauge()
                  .Name("pstrain_evaluator_last_metric")
                  .Help("The last evaluation's value of each metric, labelled name=<metric>.")
                  .Register(registry)),
      skipped_(BuildCounter()
                   .Name("pstrain_evaluator_checkpoints_skipped_total")
                   .Help("Checkpoints not evaluated, by reason.")
                   .Register(registry)),
      exports_(BuildCounter()
                   .Name("pstrain_evaluator_exports_total")
                   .Help("Exported models written, kind=best or final.")
                   .Register(registry)) {
  for (const char* status : {"evaluated", "missing_checkpoint", "no_new_checkpoint", "failed"}) {
    evaluations_.Add({{"status", status}});
  }
  for (const char* reason : {"throttled", "already_evaluated", "older_than_evaluated",
                             "missing_checkpoint", "abandoned"}) {
    skipped_.Add({{"reason", reason}});
  }
  for (const char* kind : {"best", "final"}) exports_.Add({{"kind", kind}});
}

void EvaluatorMetrics::RecordEvaluation(absl::string_view status, int64_t step,
                                        absl::Duration duration, int64_t examples,
                                        const std::map<std::string, double>& metrics) {
  evaluations_.Add({{"status", std::string(status)}}).Increment();
  if (status != "evaluated") return;
  duration_.Observe(absl::ToDoubleSeconds(duration));
  examples_.Increment(static_cast<double>(examples));
  last_step_.Set(static_cast<double>(step));
  absl::MutexLock lock(&mu_);
  for (const auto& [name, value] : metrics) {
    prometheus::Gauge*& gauge = metric_gauges_[name];
    if (gauge == nullptr) gauge = &metric_.Add({{"name", name}});
    gauge->Set(value);
  }
}

void EvaluatorMetrics::RecordSkipped(absl::string_view reason) {
  skipped_.Add({{"reason", std::string(reason)}}).Increment();
}

void EvaluatorMetrics::RecordExport(absl::string_view kind) {
  exports_.Add({{"kind", std::string(kind)}}).Increment();
}

}  // namespace evaluator
}  // namespace pstrain
