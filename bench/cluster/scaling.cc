#include "bench/cluster/scaling.h"

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/cluster/bench_job.h"
#include "bench/cluster/throughput_figures.h"
#include "bench/report/markdown_table.h"

namespace pstrain {
namespace bench {
namespace {

void ModelSweepSection(const ScalingResults& results, MarkdownReport& report) {
  MarkdownTable table({"model", "parameters", "cluster examples/s", "single process examples/s",
                       "ratio", "cluster ns/parameter/step", "single process ns/parameter/step",
                       "steps per worker",
                       "worker ms per step: data_wait / pull / compute / "
                       "push_wait / idle",
                       "push latency ms"});
  for (const ThroughputPoint& point : results.model_sweep) {
    std::vector<std::string> steps;
    for (const WorkerWindow& worker : point.window.workers) steps.push_back(Fixed(worker.steps, 0));
    table.AddRow({point.label, absl::StrFormat("%.2fM", MlpParameters(point.hidden_units) / 1e6),
                  Fixed(point.window.ExamplesPerSecond(), 0),
                  Fixed(point.reference->examples_per_sec, 0),
                  Fixed(point.window.ExamplesPerSecond() / point.reference->examples_per_sec, 2),
                  Fixed(NsPerParameterStep(point), 2),
                  Fixed(ReferenceNsPerParameterStep(*point.reference, point.hidden_units), 2),
                  absl::StrJoin(steps, ", "), MeanPhasesText(point.window),
                  MeanPushLatencyText(point.window)});
  }
  report.SubHeading("Scaling with the model (async, 1 ps + 2 workers)");
  report.Paragraph(
      "MLPs with two equal hidden layers sized for the parameter count; the single-process "
      "trainer on each model is the reference. ns/parameter/step is wall time per update "
      "(all workers' steps) divided by the parameters. Phases are recorded when they end, so "
      "with only a few steps in a window a phase begun before it counts in full and idle can "
      "come out negative.");
  report.Table(table);
}

void WorkerSweepSection(const ScalingResults& results, MarkdownReport& report) {
  MarkdownTable table({"workers", "examples/s", "ratio to 1 worker", "ratio to single process",
                       "ms per step per worker", "ns/parameter/step",
                       "worker ms per step: data_wait / pull / compute / push_wait / idle",
                       "push latency ms"});
  const double one = results.worker_sweep.front().window.ExamplesPerSecond();
  for (const ThroughputPoint& point : results.worker_sweep) {
    double steps = 0;
    for (const WorkerWindow& worker : point.window.workers) steps += worker.steps;
    const double per_worker_ms =
        steps > 0 ? point.window.seconds / (steps / point.workers) * 1e3 : 0;
    table.AddRow(
        {point.label, Fixed(point.window.ExamplesPerSecond(), 0),
         Fixed(point.window.ExamplesPerSecond() / one, 2),
         point.reference.has_value()
             ? Fixed(point.window.ExamplesPerSecond() / point.reference->examples_per_sec, 2)
             : "",
         Fixed(per_worker_ms, 2), Fixed(NsPerParameterStep(point), 2), MeanPhasesText(point.window),
         MeanPushLatencyText(point.window)});
  }
  report.SubHeading("Scaling with the workers (async, 1 ps, Fashion-MNIST MLP)");
  report.Paragraph(absl::StrCat(
      "A new cluster per worker count; the single-process trainer ran just before the sweep. "
      "The machine has ",
      std::thread::hardware_concurrency(),
      " cores, shared by the parameter server, the workers and the coordinator."));
  report.Table(table);
}

}  // namespace

absl::Status RunModelSweep(ClusterBenchSettings& settings, BenchCluster& cluster,
                           ScalingResults& results) {
  for (int64_t size : settings.model_sizes) {
    const std::vector<int64_t> hidden = HiddenUnitsForParameters(size);
    absl::StatusOr<SingleProcessRun> reference = MeasureSingleProcess(settings, hidden);
    if (!reference.ok()) return reference.status();
    absl::StatusOr<ThroughputWindow> window =
        MeasureCluster(settings, cluster, hidden, /*sync=*/false, settings.sweep_window);
    if (!window.ok()) return window.status();
    results.model_sweep.push_back({MlpShape(hidden), hidden, 2, *window, *reference});
  }
  return absl::OkStatus();
}

absl::Status RunWorkerSweep(ClusterBenchSettings& settings, ScalingResults& results) {
  absl::StatusOr<SingleProcessRun> reference = MeasureSingleProcess(settings, FashionMlp());
  if (!reference.ok()) return reference.status();
  for (int workers : settings.worker_counts) {
    absl::StatusOr<std::unique_ptr<BenchCluster>> cluster = StartCluster(settings, workers);
    if (!cluster.ok()) return cluster.status();
    absl::StatusOr<ThroughputWindow> window =
        MeasureCluster(settings, **cluster, FashionMlp(), /*sync=*/false, settings.sweep_window);
    if (!window.ok()) return window.status();
    if (absl::Status stopped = (*cluster)->Stop(); !stopped.ok()) return stopped;
    results.worker_sweep.push_back(
        {absl::StrCat(workers), FashionMlp(), workers, *window, *reference});
  }
  return absl::OkStatus();
}

void AddScalingSections(const ScalingResults& results, MarkdownReport& report) {
  if (!results.model_sweep.empty()) ModelSweepSection(results, report);
  if (!results.worker_sweep.empty()) WorkerSweepSection(results, report);
}

}  // namespace bench
}  // namespace pstrain
