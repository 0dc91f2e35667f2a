#include "worker/worker_metrics.h"

namespace pstrain {
namespace worker {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

// 100 us .. ~13 s, doubling.
Histogram::BucketBoundaries LatencyBuckets() {
  Histogram::BucketBoundaries b;
  for (double s = 1e-4; s < 15; s *= 2) b.push_back(s);
  return b;
}

prometheus::Counter& Counter(prometheus::Registry& registry, const char* name, const char* help) {
  return BuildCounter().Name(name).Help(help).Register(registry).Add({});
}

prometheus::Gauge& Gauge(prometheus::Registry& registry, const char* name, const char* help) {
  return BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

prometheus::Histogram& Latency(prometheus::Registry& registry, const char* name, const char* help) {
  return BuildHistogram().Name(name).Help(help).Register(registry).Add({}, LatencyBuckets());
}

}  // namespace

WorkerMetrics::WorkerMetrics(prometheus::Registry& registry)
    : steps_(Counter(registry, "pstrain_worker_steps_total", "Training steps computed.")),
      examples_(Counter(registry, "pstrain_worker_examples_total", "Training examples computed.")),
      examples_per_sec_(Gauge(registry, "pstrain_worker_examples_per_second",
                              "Examples per second over the last reporting interval.")),
      loss_(Gauge(registry, "pstrain_worker_loss",
                  "Mean training loss over the last reporting interval.")),
      compute_seconds_(Latency(registry, "pstrain_worker_compute_seconds",
                               "Forward and backward pass of one batch.")),
      push_bytes_(Counter(registry, "pstrain_worker_push_bytes_total", "Gradient bytes pushed.")),
      push_latency_(Latency(registry, "pstrain_worker_push_latency_seconds",
                            "One step's push to every shard, retries included.")),
      pull_bytes_(Counter(registry, "pstrain_worker_pull_bytes_total", "Parameter bytes pulled.")),
      pull_latency_(Latency(registry, "pstrain_worker_pull_latency_seconds",
                            "One step's pull from every shard, waits included.")),
      stale_pushes_(Counter(registry, "pstrain_worker_stale_pushes_total",
                            "Pushes refused as stale; their batches' records were returned.")),
      retries_(Counter(registry, "pstrain_worker_retries_total",
                       "Calls to a parameter server or the coordinator attempted again.")),
      returned_records_(Counter(registry, "pstrain_worker_returned_records_total",
                                "Leased records handed back to the coordinator untrained.")),
      busy_(Gauge(registry, "pstrain_worker_busy", "1 while the worker trains a job.")) {}

void WorkerMetrics::RecordPush(int64_t bytes, absl::Duration latency) {
  push_bytes_.Increment(static_cast<double>(bytes));
  push_latency_.Observe(absl::ToDoubleSeconds(latency));
}

void WorkerMetrics::RecordPull(int64_t bytes, absl::Duration latency) {
  pull_bytes_.Increment(static_cast<double>(bytes));
  pull_latency_.Observe(absl::ToDoubleSeconds(latency));
}

void WorkerMetrics::RecordStep(int64_t examples, absl::Duration compute) {
  steps_.Increment();
  examples_.Increment(static_cast<double>(examples));
  compute_seconds_.Observe(absl::ToDoubleSeconds(compute));
}

void WorkerMetrics::SetLoop(double loss, double examples_per_sec) {
  loss_.Set(loss);
  examples_per_sec_.Set(examples_per_sec);
}

}  // namespace worker
}  // namespace pstrain
