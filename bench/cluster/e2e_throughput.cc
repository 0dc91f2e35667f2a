#include "bench/cluster/e2e_throughput.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/cluster/step_breakdown_chart.h"
#include "bench/cluster/throughput_figures.h"
#include "bench/report/markdown_table.h"

namespace pstrain {
namespace bench {
namespace {

void ThroughputSection(const E2eResults& results, MarkdownReport& report) {
  MarkdownTable table({"run", "examples/s", "ratio to single process", "global steps/s",
                       "steps per worker in window"});
  std::vector<std::pair<std::string, double>> ratios;
  for (const ThroughputPoint* point : {&results.async_run, &results.sync_run}) {
    const double reference = point->reference->examples_per_sec;
    std::vector<std::string> runs;
    for (const SingleProcessRun& run : point->reference_runs) {
      runs.push_back(Fixed(run.examples_per_sec, 0));
    }
    table.AddRow({absl::StrCat("single process (`pstrain train-local`), mean of the runs before "
                               "and after ",
                               point->label, " (", absl::StrJoin(runs, ", "), ")"),
                  Fixed(reference, 0), "1.00", "", ""});
    std::vector<std::string> steps;
    for (const WorkerWindow& worker : point->window.workers)
      steps.push_back(Fixed(worker.steps, 0));
    const double ratio = point->window.ExamplesPerSecond() / reference;
    table.AddRow({absl::StrCat("cluster ", point->label, ", 1 ps + 2 workers"),
                  Fixed(point->window.ExamplesPerSecond(), 0), Fixed(ratio, 2),
                  Fixed(point->window.global_steps / point->window.seconds, 1),
                  absl::StrJoin(steps, ", ")});
    ratios.emplace_back(point->label, ratio);
  }
  report.SubHeading("Throughput: Fashion-MNIST MLP 784-256-128-10, batch 128");
  report.Table(table);
  report.Paragraph(
      "Cluster examples/s are the workers' computed examples (sum of "
      "`pstrain_worker_examples_total` differences) over the window; each cluster run is "
      "compared with the mean of the single-process runs just before and just after it. A sync "
      "global step is one round of both workers' batches. The coordinator's global step moves "
      "by progress reports (every 100 steps), so global steps/s is coarse.");
  for (const auto& [label, ratio] : ratios) {
    const double goal = label == "async" ? 1.2 : 0.9;
    report.Target(
        absl::StrCat(label, " examples/s >= ", Fixed(goal, 1), "x the single-process trainer"),
        ratio >= goal, absl::StrCat(Fixed(ratio, 2), "x"));
  }
}

void BreakdownSection(const E2eResults& results, const std::string& svg_path,
                      MarkdownReport& report) {
  std::vector<std::string> header = {"run", "worker", "steps"};
  for (const std::string& segment : BreakdownSegments()) header.push_back(segment + " ms");
  header.push_back("total ms");
  header.push_back("push latency ms");
  MarkdownTable table(header);
  for (const ThroughputPoint* point : {&results.async_run, &results.sync_run}) {
    for (const WorkerWindow& worker : point->window.workers) {
      std::vector<std::string> row = {point->label, worker.task, Fixed(worker.steps, 0)};
      double total = 0;
      for (double ms : PhaseMsPerStep(worker, point->window.seconds)) {
        row.push_back(Fixed(ms, 2));
        total += ms;
      }
      row.push_back(Fixed(total, 2));
      row.push_back(worker.pushes > 0 ? Fixed(worker.push_seconds / worker.pushes * 1e3, 2) : "");
      table.AddRow(row);
    }
  }
  const double reference_ms = kBatch / results.fashion_reference.examples_per_sec * 1e3;
  report.SubHeading("Step-time breakdown per worker (mean ms per step in the window)");
  report.Paragraph(absl::StrCat(
      "From `pstrain_worker_step_phase_seconds` (sum differences over the window, divided by the "
      "worker's steps); idle is the window's wall time not in any phase (data-lease and "
      "progress calls, the wait for a lease's last push). Push latency "
      "(`pstrain_worker_push_latency_seconds`) is per push; async overlaps it with the next "
      "pull, so only push_wait counts in the step. The single-process trainer takes ",
      Fixed(reference_ms, 2), " ms per step of 128 (the reference of the async run).",
      svg_path.empty() ? "" : absl::StrCat(" Chart: `", svg_path, "`.")));
  report.Table(table);
}

}  // namespace

absl::StatusOr<E2eResults> RunE2eThroughput(ClusterBenchSettings& settings, BenchCluster& cluster) {
  E2eResults results;
  absl::StatusOr<SingleProcessRun> before = MeasureSingleProcess(settings, FashionMlp());
  if (!before.ok()) return before.status();
  for (bool sync : {false, true}) {
    absl::StatusOr<ThroughputWindow> window =
        MeasureCluster(settings, cluster, FashionMlp(), sync, settings.window);
    if (!window.ok()) return window.status();
    absl::StatusOr<SingleProcessRun> after = MeasureSingleProcess(settings, FashionMlp());
    if (!after.ok()) return after.status();
    ThroughputPoint point{sync ? "sync" : "async", FashionMlp(), 2, *window,
                          Bracketing(*before, *after)};
    point.reference_runs = {*before, *after};
    if (sync) {
      results.sync_run = point;
    } else {
      results.async_run = point;
      results.fashion_reference = *point.reference;
    }
    before = after;
  }
  return results;
}

void AddE2eSections(const E2eResults& results, const std::string& svg_path,
                    MarkdownReport& report) {
  ThroughputSection(results, report);
  BreakdownSection(results, svg_path, report);
}

std::string BreakdownSvg(const E2eResults& results, absl::Duration window) {
  StepBreakdownChart chart;
  chart.title = "Worker step time by phase: MLP 784-256-128-10, 1 ps + 2 workers";
  chart.subtitle = absl::StrFormat(
      "Fashion-MNIST, batch 128, mean over a %.0f s window; idle = window time outside the "
      "phases",
      absl::ToDoubleSeconds(window));
  chart.segments = BreakdownSegments();
  chart.reference_ms = kBatch / results.fashion_reference.examples_per_sec * 1e3;
  chart.reference_label = "single process";
  for (const ThroughputPoint* point : {&results.async_run, &results.sync_run}) {
    for (const WorkerWindow& worker : point->window.workers) {
      chart.bars.push_back(
          {{worker.task, point->label}, PhaseMsPerStep(worker, point->window.seconds)});
    }
  }
  return DrawStepBreakdownSvg(chart);
}

}  // namespace bench
}  // namespace pstrain
