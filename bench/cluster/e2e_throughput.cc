#include "bench/cluster/e2e_throughput.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/cluster/step_breakdown_chart.h"
#include "bench/cluster/throughput_figures.h"
#include "bench/report/markdown_table.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/fashion_mnist.h"
#include "common/data/tfrecord_writer.h"

namespace pstrain {
namespace bench {
namespace {

// Every run, data path by data path.
std::vector<std::pair<const E2ePath*, const ThroughputPoint*>> Runs(const E2eResults& results) {
  std::vector<std::pair<const E2ePath*, const ThroughputPoint*>> runs;
  for (const E2ePath& path : results.paths) {
    runs.emplace_back(&path, &path.async_run);
    runs.emplace_back(&path, &path.sync_run);
  }
  return runs;
}

std::string PathLabel(const E2ePath& path) {
  return path.name == "shm" ? "shared memory" : "gRPC bytes";
}

void ThroughputSection(const E2eResults& results, MarkdownReport& report) {
  MarkdownTable table({"run", "examples/s", "ratio to single process", "CPU s per 1,000 examples",
                       "global steps/s", "steps per worker in window"});
  // The targets are read on the first path (shared memory, as `pstrain
  // local` runs).
  std::vector<std::pair<std::string, double>> ratios;
  for (const auto& [path, point] : Runs(results)) {
    const double reference = point->reference->examples_per_sec;
    std::vector<std::string> runs;
    for (const SingleProcessRun& run : point->reference_runs) {
      runs.push_back(Fixed(run.examples_per_sec, 0));
    }
    table.AddRow(
        {absl::StrCat("single process (`pstrain train-local`), mean of the runs before "
                      "and after ",
                      point->label, ", ", PathLabel(*path), " (", absl::StrJoin(runs, ", "), ")"),
         Fixed(reference, 0), "1.00", Fixed(1000 / reference, 3), "", ""});
    std::vector<std::string> steps;
    for (const WorkerWindow& worker : point->window.workers)
      steps.push_back(Fixed(worker.steps, 0));
    const double ratio = point->window.ExamplesPerSecond() / reference;
    table.AddRow(
        {absl::StrCat("cluster ", point->label, ", ", PathLabel(*path), ", 1 ps + 2 workers"),
         Fixed(point->window.ExamplesPerSecond(), 0), Fixed(ratio, 2),
         Fixed(point->window.CpuSecondsPerThousandExamples(), 3),
         Fixed(point->window.global_steps / point->window.seconds, 1), absl::StrJoin(steps, ", ")});
    if (path == &results.paths.front()) ratios.emplace_back(point->label, ratio);
  }
  std::vector<std::string> two_thread_runs;
  for (const SingleProcessRun& run : results.two_thread_runs) {
    two_thread_runs.push_back(Fixed(run.examples_per_sec, 0));
  }
  const double two_threads = results.two_thread_reference.examples_per_sec;
  table.AddRow({absl::StrCat("single process, `training.compute_threads: 2`, mean of the runs "
                             "before the first cluster run and after the last (",
                             absl::StrJoin(two_thread_runs, ", "), ")"),
                Fixed(two_threads, 0), "", "", "", ""});
  report.SubHeading("Throughput: Fashion-MNIST MLP 784-256-128-10, batch 128");
  report.Table(table);
  report.Paragraph(
      "Cluster examples/s are the workers' computed examples (sum of "
      "`pstrain_worker_examples_total` differences) over the window; each cluster run is "
      "compared with the mean of the single-process runs just before and just after it. A sync "
      "global step is one round of both workers' batches. The coordinator's global step moves "
      "by progress reports (every 100 steps), so global steps/s is coarse. Shared memory: the "
      "workers and the parameter server move tensor bytes through shared-memory lanes, as "
      "`pstrain local` runs them; gRPC bytes: the workers run with `--shm=false`, tensor bytes "
      "in the messages as between hosts, on a cluster of their own. The targets are read on "
      "the shared-memory runs. CPU s per 1,000 examples: the cluster's is every process's "
      "`process_cpu_seconds_total` (coordinator, parameter server, workers, evaluator) over "
      "the window; the single process's is its training wall time, a lower bound on its CPU "
      "time (one compute thread, busy throughout).");
  for (const auto& [label, ratio] : ratios) {
    const double goal = label == "async" ? 1.2 : 0.9;
    report.Target(absl::StrCat(label, " examples/s >= ", Fixed(goal, 1),
                               "x the single-process trainer (shared memory)"),
                  ratio >= goal, absl::StrCat(Fixed(ratio, 2), "x"));
  }
  const double async_ratio =
      results.paths.front().async_run.window.ExamplesPerSecond() / two_threads;
  report.Target(
      "async examples/s >= 1.0x the single-process trainer with two compute threads (shared "
      "memory)",
      async_ratio >= 1.0, absl::StrCat(Fixed(async_ratio, 2), "x"));
}

void BreakdownSection(const E2eResults& results, const std::string& svg_path,
                      MarkdownReport& report) {
  std::vector<std::string> header = {"run", "path", "worker", "steps"};
  for (const std::string& segment : BreakdownSegments()) header.push_back(segment + " ms");
  header.push_back("total ms");
  header.push_back("push latency ms");
  MarkdownTable table(header);
  for (const auto& [path, point] : Runs(results)) {
    for (const WorkerWindow& worker : point->window.workers) {
      std::vector<std::string> row = {point->label, PathLabel(*path), worker.task,
                                      Fixed(worker.steps, 0)};
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
      "(`pstrain_worker_push_latency_seconds`) is per push, from its start until the worker "
      "has its outcome; async overlaps it with the next pull and collects the outcome after "
      "that pull, so it is at least the pull's time, and only push_wait counts in the step. "
      "The single-process trainer takes ",
      Fixed(reference_ms, 2), " ms per step of 128 (the reference of the async run).",
      svg_path.empty() ? "" : absl::StrCat(" Chart: `", svg_path, "`.")));
  report.Table(table);
}

}  // namespace

namespace {

// Writes Fashion-MNIST's training images as a TFRecord file under the
// bench's folder, as `pstrain write-tfrecord` does; its path.
absl::StatusOr<std::string> WriteFashionTfRecord(const ClusterBenchSettings& settings) {
  absl::StatusOr<std::unique_ptr<InMemorySource>> images =
      LoadFashionMnist(settings.data_dir, /*test=*/false);
  if (!images.ok()) return images.status();
  const std::string path = absl::StrCat(settings.work_dir, "/fashion_mnist_train.tfrecord");
  PosixEnv env;
  if (absl::Status written = WriteTfRecordFile(env, path, **images); !written.ok()) {
    return written;
  }
  return path;
}

// The async shared-memory run again on streamed data, with the
// single-process run after it (the one before is `before`).
absl::StatusOr<ThroughputPoint> MeasureStreamed(ClusterBenchSettings& settings,
                                                BenchCluster& cluster,
                                                const SingleProcessRun& before) {
  absl::StatusOr<std::string> tfrecord = WriteFashionTfRecord(settings);
  if (!tfrecord.ok()) return tfrecord.status();
  Progress("e2e: async, shared memory, training data streamed from TFRecord");
  absl::StatusOr<ThroughputWindow> window =
      MeasureCluster(settings, cluster, FashionMlp(), /*sync=*/false, settings.window, *tfrecord);
  if (!window.ok()) return window.status();
  absl::StatusOr<SingleProcessRun> after = MeasureSingleProcess(settings, FashionMlp());
  if (!after.ok()) return after.status();
  ThroughputPoint point{"async, streamed TFRecord", FashionMlp(), 2, *window,
                        Bracketing(before, *after)};
  point.reference_runs = {before, *after};
  return point;
}

void StreamedSection(const E2eResults& results, MarkdownReport& report) {
  const ThroughputPoint& in_memory = results.paths.front().async_run;
  const ThroughputPoint& streamed = *results.streamed_run;
  MarkdownTable table({"training data", "examples/s", "ratio to in memory",
                       "worker ms per step: data_wait / pull / compute / push_wait / idle",
                       "data_wait share of the step"});
  for (const ThroughputPoint* point : {&in_memory, &streamed}) {
    table.AddRow(
        {point == &in_memory ? "in memory (IDX files)"
                             : "streamed from TFRecord (blocks of 1024, windows of 8)",
         Fixed(point->window.ExamplesPerSecond(), 0),
         Fixed(point->window.ExamplesPerSecond() / in_memory.window.ExamplesPerSecond(), 2),
         MeanPhasesText(point->window),
         absl::StrCat(Fixed(100 * DataWaitShare(point->window), 1), "%")});
  }
  report.SubHeading("Streamed training data: the same MLP, async, shared memory");
  report.Table(table);
  report.Paragraph(
      "The async shared-memory run above beside a run on the same images kept as one TFRecord "
      "file (written by the benchmark, 192 MB) and read with `read_mode: READ_MODE_STREAMED`: "
      "each worker reads a block of 1024 records at a time on its prefetch thread and parses "
      "records as batches take them; it reads the window (8 blocks) of its next lease while "
      "the current one has 16 batches left. data_wait is the time a step waits for its batch. "
      "Target: under 5% of the step.");
}

}  // namespace

absl::StatusOr<E2eResults> RunE2eThroughput(ClusterBenchSettings& settings, BenchCluster& cluster) {
  E2eResults results;
  absl::StatusOr<SingleProcessRun> two_threads =
      MeasureSingleProcess(settings, FashionMlp(), /*compute_threads=*/2);
  if (!two_threads.ok()) return two_threads.status();
  results.two_thread_runs.push_back(*two_threads);
  absl::StatusOr<SingleProcessRun> before = MeasureSingleProcess(settings, FashionMlp());
  if (!before.ok()) return before.status();
  results.fashion_reference = *before;
  std::unique_ptr<BenchCluster> grpc_cluster;
  for (const char* name : {"shm", "grpc"}) {
    BenchCluster* on = &cluster;
    if (std::string(name) == "grpc") {
      absl::StatusOr<std::unique_ptr<BenchCluster>> started =
          StartCluster(settings, 2, {"--shm=false"});
      if (!started.ok()) return started.status();
      grpc_cluster = *std::move(started);
      on = grpc_cluster.get();
    }
    E2ePath& path = results.paths.emplace_back();
    path.name = name;
    for (bool sync : {false, true}) {
      Progress(absl::StrCat("e2e: ", sync ? "sync" : "async", ", ", PathLabel(path)));
      absl::StatusOr<ThroughputWindow> window =
          MeasureCluster(settings, *on, FashionMlp(), sync, settings.window);
      if (!window.ok()) return window.status();
      absl::StatusOr<SingleProcessRun> after = MeasureSingleProcess(settings, FashionMlp());
      if (!after.ok()) return after.status();
      ThroughputPoint point{sync ? "sync" : "async", FashionMlp(), 2, *window,
                            Bracketing(*before, *after)};
      point.reference_runs = {*before, *after};
      (sync ? path.sync_run : path.async_run) = point;
      before = after;
    }
  }
  if (absl::Status stopped = grpc_cluster->Stop(); !stopped.ok()) return stopped;
  absl::StatusOr<ThroughputPoint> streamed = MeasureStreamed(settings, cluster, *before);
  if (!streamed.ok()) return streamed.status();
  results.streamed_run = *streamed;
  two_threads = MeasureSingleProcess(settings, FashionMlp(), /*compute_threads=*/2);
  if (!two_threads.ok()) return two_threads.status();
  results.two_thread_runs.push_back(*two_threads);
  results.two_thread_reference =
      Bracketing(results.two_thread_runs.front(), results.two_thread_runs.back());
  return results;
}

void AddE2eSections(const E2eResults& results, const std::string& svg_path,
                    MarkdownReport& report) {
  ThroughputSection(results, report);
  BreakdownSection(results, svg_path, report);
  if (results.streamed_run.has_value()) StreamedSection(results, report);
}

std::string BreakdownSvg(const E2eResults& results, absl::Duration window) {
  StepBreakdownChart chart;
  chart.title = "Worker step time by phase: shared memory (shm) and gRPC bytes (grpc)";
  chart.subtitle = absl::StrFormat(
      "MLP 784-256-128-10 on Fashion-MNIST, 1 ps + 2 workers, batch 128, mean over a %.0f s "
      "window; idle = outside the phases",
      absl::ToDoubleSeconds(window));
  chart.segments = BreakdownSegments();
  chart.reference_ms = kBatch / results.fashion_reference.examples_per_sec * 1e3;
  chart.reference_label = "single process";
  for (const auto& [path, point] : Runs(results)) {
    for (const WorkerWindow& worker : point->window.workers) {
      chart.bars.push_back(
          {{worker.task, point->label, path->name}, PhaseMsPerStep(worker, point->window.seconds)});
    }
  }
  return DrawStepBreakdownSvg(chart);
}

}  // namespace bench
}  // namespace pstrain
