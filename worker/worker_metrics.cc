#include "worker/worker_metrics.h"

#include <string>

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

prometheus::Family<prometheus::Histogram>& StepPhases(prometheus::Registry& registry) {
  return BuildHistogram()
      .Name("pstrain_worker_step_phase_seconds")
      .Help(
          "Time of one training step spent in each phase: data_wait (reading the batch), "
          "pull, compute (forward and backward), push_wait (the previous push, overlapped "
          "with this pull, being decided).")
      .Register(registry);
}

}  // namespace

WorkerMetrics::WorkerMetrics(prometheus::Registry& registry)
    : steps_(Counter(registry, "pstrain_worker_steps_total", "Training steps computed.")),
      examples_(Counter(registry, "pstrain_worker_examples_total", "Training examples computed.")),
      examples_per_sec_(Gauge(registry, "pstrain_worker_examples_per_second",
                              "Examples per second over the last whole loop of steps.")),
      loss_(Gauge(registry, "pstrain_worker_loss",
                  "Mean training loss over the last whole loop of steps.")),
      data_wait_seconds_(StepPhases(registry).Add({{"phase", "data_wait"}}, LatencyBuckets())),
      pull_seconds_(StepPhases(registry).Add({{"phase", "pull"}}, LatencyBuckets())),
      compute_seconds_(StepPhases(registry).Add({{"phase", "compute"}}, LatencyBuckets())),
      push_wait_seconds_(StepPhases(registry).Add({{"phase", "push_wait"}}, LatencyBuckets())),
      push_bytes_(Counter(registry, "pstrain_worker_push_bytes_total", "Gradient bytes pushed.")),
      push_latency_(Latency(registry, "pstrain_worker_push_latency_seconds",
                            "One step's push to every shard, retries included, until the worker "
                            "has its outcome (async: after the next pull).")),
      pull_bytes_(Counter(registry, "pstrain_worker_pull_bytes_total", "Parameter bytes pulled.")),
      pull_latency_(Latency(registry, "pstrain_worker_pull_latency_seconds",
                            "One step's pull from every shard, waits included.")),
      retries_(BuildCounter()
                   .Name("pstrain_worker_retries_total")
                   .Help("Calls attempted again, by cause: pull_unavailable and "
                         "push_unavailable (a parameter server did not answer), no_free_lease "
                         "(every data range was leased out; asked again).")
                   .Register(registry)),
      lane_fallbacks_(BuildCounter()
                          .Name("pstrain_worker_lane_fallbacks_total")
                          .Help("Streams to a parameter server whose pushes and pulls go "
                                "over gRPC alone because no shared-memory lane could be opened, "
                                "by reason (a status code: FAILED_PRECONDITION for another host "
                                "or lanes off, UNIMPLEMENTED for an older shard).")
                          .Register(registry)),
      requeued_batches_(BuildCounter()
                            .Name("pstrain_worker_requeued_batches_total")
                            .Help("Batches whose records went back to the coordinator to be "
                                  "trained again, by cause: stale_push (refused as too old), "
                                  "push_failed.")
                            .Register(registry)),
      returned_records_(Counter(registry, "pstrain_worker_returned_records_total",
                                "Leased records handed back to the coordinator untrained.")),
      busy_(Gauge(registry, "pstrain_worker_busy", "1 while the worker trains a job.")) {
  for (const char* cause : {"pull_unavailable", "push_unavailable", "no_free_lease"}) {
    retries_.Add({{"cause", cause}});
  }
  for (const char* cause : {"stale_push", "push_failed"}) requeued_batches_.Add({{"cause", cause}});
}

void WorkerMetrics::RecordPush(int64_t bytes, absl::Duration latency) {
  push_bytes_.Increment(static_cast<double>(bytes));
  push_latency_.Observe(absl::ToDoubleSeconds(latency));
}

void WorkerMetrics::RecordPull(int64_t bytes, absl::Duration latency) {
  pull_bytes_.Increment(static_cast<double>(bytes));
  pull_latency_.Observe(absl::ToDoubleSeconds(latency));
}

void WorkerMetrics::RecordRetry(absl::string_view cause) {
  retries_.Add({{"cause", std::string(cause)}}).Increment();
}

void WorkerMetrics::RecordLaneFallback(absl::string_view reason) {
  lane_fallbacks_.Add({{"reason", std::string(reason)}}).Increment();
}

void WorkerMetrics::RecordRequeuedBatch(absl::string_view cause) {
  requeued_batches_.Add({{"cause", std::string(cause)}}).Increment();
}

void WorkerMetrics::RecordStep(int64_t examples) {
  steps_.Increment();
  examples_.Increment(static_cast<double>(examples));
}

void WorkerMetrics::RecordPhase(StepPhase phase, absl::Duration duration) {
  const double seconds = absl::ToDoubleSeconds(duration);
  switch (phase) {
    case StepPhase::kDataWait:
      data_wait_seconds_.Observe(seconds);
      break;
    case StepPhase::kPull:
      pull_seconds_.Observe(seconds);
      break;
    case StepPhase::kCompute:
      compute_seconds_.Observe(seconds);
      break;
    case StepPhase::kPushWait:
      push_wait_seconds_.Observe(seconds);
      break;
  }
}

void WorkerMetrics::SetLoop(double loss, double examples_per_sec) {
  loss_.Set(loss);
  examples_per_sec_.Set(examples_per_sec);
}

}  // namespace worker
}  // namespace pstrain
