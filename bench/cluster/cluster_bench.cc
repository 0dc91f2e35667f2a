// End-to-end benchmarks of pstrain on a local cluster (coordinator,
// parameter server, workers and evaluator as real processes on loopback),
// each against the single-process trainer measured in the same run:
//   e2e       examples/s of 1 ps + 2 workers, async and sync, on the
//             Fashion-MNIST MLP 784-256-128-10, and each worker's step-time
//             breakdown (drawn to --svg);
//   accuracy  wall time from submit to the evaluation reaching 88% test
//             accuracy;
//   scaling   examples/s as the model grows (about 1M..64M parameters) and
//             as the workers grow (1, 2, 4, 8).
// Writes one Markdown section to --report (bench/run_all.sh collects it).
//
//   bazel build -c opt //bench/cluster:cluster_bench //client:pstrain
//   bazel-bin/bench/cluster/cluster_bench --report=cluster.md --svg=bench/step_breakdown.svg

#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/bench_job.h"
#include "bench/cluster/step_breakdown_chart.h"
#include "bench/common/single_process_reference.h"
#include "bench/report/markdown_report.h"
#include "bench/report/markdown_table.h"
#include "client/binary_locator.h"
#include "gflags/gflags.h"

DEFINE_string(report, "", "write the Markdown section here (default: stdout)");
DEFINE_string(svg, "", "write the step-time breakdown chart here (e2e part; default: none)");
DEFINE_string(parts, "e2e,accuracy,scaling", "which parts to run: e2e, accuracy, scaling");
DEFINE_double(warmup_secs, 4, "training time after every worker's first step, before measuring");
DEFINE_double(window_secs, 12, "measured window of the e2e runs");
DEFINE_double(sweep_window_secs, 8, "measured window of each scaling point");
DEFINE_int32(min_window_steps, 2,
             "stretch a window until every worker computed this many steps in it (large models)");
DEFINE_double(max_window_secs, 25, "but never beyond this");
DEFINE_int64(reference_steps, 1500,
             "steps of the single-process reference on the 784-256-128-10 MLP (larger models: "
             "scaled down by their size, at least 5)");
DEFINE_string(model_sizes, "1e6,4e6,16e6,64e6", "scaling: parameter counts of the model sweep");
DEFINE_string(worker_counts, "1,2,4,8", "scaling: worker counts of the worker sweep");
DEFINE_double(target_accuracy, 0.88, "accuracy part: the test accuracy to reach");
DEFINE_int64(checkpoint_every_steps, 200, "accuracy part: checkpoint (and evaluation) interval");
DEFINE_int64(cosine_decay_steps, 3000,
             "accuracy part: the learning rate decays to a tenth over this many steps (as in "
             "examples/fashion_mnist_mlp.pbtxt); 0: constant");
DEFINE_double(accuracy_timeout_secs, 120, "accuracy part: give up after this");
DEFINE_string(data_dir, "/usr/share/datasets/fashion-mnist", "Fashion-MNIST IDX files");
DEFINE_string(bin_dir, "", "folder of pstrain and its servers; default this program's runfiles");
DEFINE_string(coordinator_flags, "",
              "more flags for the coordinator, comma-separated (e.g. --records_per_lease=4096)");
DEFINE_string(worker_flags, "",
              "more flags for every worker, comma-separated (e.g. --nooverlap_pull_with_push)");
DEFINE_string(work_dir, "",
              "logs and checkpoints go here; default a new folder under $TMPDIR (or /tmp)");

namespace pstrain {
namespace bench {
namespace {

constexpr int kBatch = 128;
constexpr int kTrainExamples = 60000;
constexpr absl::Duration kStartTimeout = absl::Seconds(120);
constexpr absl::Duration kStopTimeout = absl::Seconds(60);
const std::vector<int64_t> kFashionMlp = {256, 128};

void Progress(const std::string& message) {
  std::fprintf(stderr, "[cluster_bench %s] %s\n",
               absl::FormatTime("%H:%M:%S", absl::Now(), absl::LocalTimeZone()).c_str(),
               message.c_str());
  std::fflush(stderr);
}

struct Settings {
  std::string work_dir;
  std::string checkpoint_root;
  std::set<std::string> parts;
  std::vector<int64_t> model_sizes;
  std::vector<int> worker_counts;
  int next_job = 0;  // numbers model_dirs and spec files

  std::string NewModelDir(const std::string& name) {
    return absl::StrCat(checkpoint_root, "/", name, "-", next_job++);
  }
};

// What a throughput point measured: the cluster window and its reference.
struct ThroughputPoint {
  std::string label;
  std::vector<int64_t> hidden_units;
  int workers = 2;
  ThroughputWindow window;
  std::optional<SingleProcessRun> reference;
  // The runs `reference` is the mean of, when more than one.
  std::vector<SingleProcessRun> reference_runs;
};

struct Results {
  std::optional<SingleProcessRun> fashion_reference;
  std::optional<ThroughputPoint> async_run, sync_run;
  std::optional<TargetRun> accuracy;
  std::vector<ThroughputPoint> model_sweep;
  std::vector<ThroughputPoint> worker_sweep;
};

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  file.close();
  if (!file) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::StatusOr<SingleProcessRun> MeasureSingleProcess(Settings& settings,
                                                      const std::vector<int64_t>& hidden) {
  BenchJob job;
  job.name = "single-process";
  job.data_dir = FLAGS_data_dir;
  job.model_dir = settings.NewModelDir("single-process");
  job.hidden_units = hidden;
  const double scale = static_cast<double>(MlpParameters(kFashionMlp)) / MlpParameters(hidden);
  const int64_t steps = std::max<int64_t>(5, std::llround(FLAGS_reference_steps * std::min(1.0, scale)));
  Progress(absl::StrCat("single-process trainer, MLP ", MlpShape(hidden), ", ", steps, " steps"));
  const std::string stem = absl::StrCat(settings.work_dir, "/train-local-", settings.next_job);
  absl::StatusOr<std::string> pstrain = LocateBinary("pstrain", FLAGS_bin_dir);
  if (!pstrain.ok()) return pstrain.status();
  if (absl::Status written = WriteFile(stem + ".pbtxt", BenchJobSpecText(job)); !written.ok()) {
    return written;
  }
  absl::StatusOr<SingleProcessRun> run =
      RunSingleProcess(*pstrain, stem + ".pbtxt", {absl::StrCat("--max_steps=", steps)},
                       stem + ".log", absl::Seconds(300));
  if (run.ok()) {
    Progress(absl::StrFormat("  single process: %.0f examples/s over %.2f s", run->examples_per_sec,
                             run->train_seconds));
  }
  return run;
}

// Submits a throughput job, measures a window after warm-up, stops the job.
absl::StatusOr<ThroughputWindow> MeasureCluster(Settings& settings, BenchCluster& cluster,
                                                const std::vector<int64_t>& hidden, bool sync,
                                                absl::Duration window) {
  BenchJob job;
  job.name = sync ? "bench-sync" : "bench-async";
  job.data_dir = FLAGS_data_dir;
  job.model_dir = settings.NewModelDir(job.name);
  job.hidden_units = hidden;
  job.sync = sync;
  Progress(absl::StrFormat("cluster (%d workers), %s, MLP %s: warm-up %.0f s, window %.0f s",
                           cluster.num_workers(), sync ? "sync" : "async", MlpShape(hidden),
                           FLAGS_warmup_secs, absl::ToDoubleSeconds(window)));
  absl::StatusOr<std::vector<MetricsPage>> before = cluster.ScrapeWorkers();
  if (!before.ok()) return before.status();
  absl::StatusOr<std::string> job_id = cluster.Submit(BenchJobSpecText(job));
  if (!job_id.ok()) return job_id.status();
  absl::StatusOr<ThroughputWindow> measured =
      cluster.Measure(*job_id, *before, kStartTimeout, absl::Seconds(FLAGS_warmup_secs), window,
                      FLAGS_min_window_steps, absl::Seconds(FLAGS_max_window_secs));
  absl::Status stopped = cluster.StopAndWait(*job_id, kStopTimeout);
  if (!measured.ok()) return measured.status();
  if (!stopped.ok()) return stopped;
  double steps = 0;
  for (const WorkerWindow& worker : measured->workers) steps += worker.steps;
  Progress(absl::StrFormat("  cluster: %.0f examples/s (%.0f worker steps in %.1f s)",
                           measured->ExamplesPerSecond(), steps, measured->seconds));
  return measured;
}

absl::StatusOr<std::unique_ptr<BenchCluster>> StartCluster(Settings& settings, int workers) {
  Progress(absl::StrCat("starting a local cluster: 1 coordinator, 1 ps, ", workers,
                        " workers, 1 evaluator"));
  return BenchCluster::Start(1, workers,
                             absl::StrCat(settings.work_dir, "/cluster-", workers, "w-",
                                          settings.next_job++),
                             settings.checkpoint_root, FLAGS_bin_dir,
                             absl::StrSplit(FLAGS_coordinator_flags, ',', absl::SkipEmpty()),
                             absl::StrSplit(FLAGS_worker_flags, ',', absl::SkipEmpty()));
}

// The mean of two single-process runs, one on each side of a cluster run.
SingleProcessRun Bracketing(const SingleProcessRun& before, const SingleProcessRun& after) {
  SingleProcessRun mean;
  mean.examples_per_sec = (before.examples_per_sec + after.examples_per_sec) / 2;
  mean.train_seconds = before.train_seconds + after.train_seconds;
  mean.steps = before.steps + after.steps;
  return mean;
}

// Each cluster run is bracketed by single-process runs (before and after,
// the one between the async and sync runs shared): other work on a shared
// machine moves absolute figures within a minute.
absl::Status RunE2e(Settings& settings, BenchCluster& cluster, Results& results) {
  absl::StatusOr<SingleProcessRun> before = MeasureSingleProcess(settings, kFashionMlp);
  if (!before.ok()) return before.status();
  for (bool sync : {false, true}) {
    absl::StatusOr<ThroughputWindow> window = MeasureCluster(
        settings, cluster, kFashionMlp, sync, absl::Seconds(FLAGS_window_secs));
    if (!window.ok()) return window.status();
    absl::StatusOr<SingleProcessRun> after = MeasureSingleProcess(settings, kFashionMlp);
    if (!after.ok()) return after.status();
    ThroughputPoint point{sync ? "sync" : "async", kFashionMlp, 2, *window,
                          Bracketing(*before, *after)};
    point.reference_runs = {*before, *after};
    (sync ? results.sync_run : results.async_run) = point;
    if (!results.fashion_reference.has_value()) results.fashion_reference = point.reference;
    before = after;
  }
  return absl::OkStatus();
}

absl::Status RunAccuracy(Settings& settings, BenchCluster& cluster, Results& results) {
  BenchJob job;
  job.name = "bench-accuracy";
  job.data_dir = FLAGS_data_dir;
  job.model_dir = settings.NewModelDir(job.name);
  job.target_accuracy = FLAGS_target_accuracy;
  job.checkpoint_every_steps = FLAGS_checkpoint_every_steps;
  job.max_steps = 50 * kTrainExamples / kBatch;  // a safety net: 50 epochs
  job.cosine_decay_steps = FLAGS_cosine_decay_steps;
  Progress(absl::StrFormat("time to %.0f%% test accuracy (async, checkpoints every %d steps)",
                           FLAGS_target_accuracy * 100, FLAGS_checkpoint_every_steps));
  absl::StatusOr<TargetRun> run = cluster.RunToTarget(
      BenchJobSpecText(job), FLAGS_target_accuracy, absl::Seconds(FLAGS_accuracy_timeout_secs));
  if (!run.ok()) return run.status();
  Progress(run->reached
               ? absl::StrFormat("  reached %.4f at step %d after %.2f s (job %s)", run->accuracy,
                                 run->step, run->seconds, JobState_Name(run->final_status.state()))
               : absl::StrCat("  not reached; job ", JobState_Name(run->final_status.state())));
  results.accuracy = *run;
  return absl::OkStatus();
}

absl::Status RunModelSweep(Settings& settings, BenchCluster& cluster, Results& results) {
  for (int64_t size : settings.model_sizes) {
    const std::vector<int64_t> hidden = HiddenUnitsForParameters(size);
    absl::StatusOr<SingleProcessRun> reference = MeasureSingleProcess(settings, hidden);
    if (!reference.ok()) return reference.status();
    absl::StatusOr<ThroughputWindow> window = MeasureCluster(
        settings, cluster, hidden, /*sync=*/false, absl::Seconds(FLAGS_sweep_window_secs));
    if (!window.ok()) return window.status();
    results.model_sweep.push_back({MlpShape(hidden), hidden, 2, *window, *reference});
  }
  return absl::OkStatus();
}

absl::Status RunWorkerSweep(Settings& settings, Results& results) {
  absl::StatusOr<SingleProcessRun> reference = MeasureSingleProcess(settings, kFashionMlp);
  if (!reference.ok()) return reference.status();
  for (int workers : settings.worker_counts) {
    absl::StatusOr<std::unique_ptr<BenchCluster>> cluster = StartCluster(settings, workers);
    if (!cluster.ok()) return cluster.status();
    absl::StatusOr<ThroughputWindow> window = MeasureCluster(
        settings, **cluster, kFashionMlp, /*sync=*/false, absl::Seconds(FLAGS_sweep_window_secs));
    if (!window.ok()) return window.status();
    if (absl::Status stopped = (*cluster)->Stop(); !stopped.ok()) return stopped;
    results.worker_sweep.push_back(
        {absl::StrCat(workers), kFashionMlp, workers, *window, *reference});
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------- report --

std::string Fixed(double value, int decimals) { return absl::StrFormat("%.*f", decimals, value); }

// Mean ms per step of one worker in a window, by phase, with "idle" (the
// window's wall time the phases do not account for) last.
std::vector<double> PhaseMsPerStep(const WorkerWindow& worker, double window_seconds) {
  std::vector<double> ms;
  double accounted = 0;
  for (const std::string& phase : StepPhases()) {
    const double seconds = worker.phase_seconds.at(phase);
    accounted += seconds;
    ms.push_back(worker.steps > 0 ? seconds / worker.steps * 1e3 : 0);
  }
  ms.push_back(worker.steps > 0 ? (window_seconds - accounted) / worker.steps * 1e3 : 0);
  return ms;
}

std::vector<std::string> BreakdownSegments() {
  std::vector<std::string> segments = StepPhases();
  segments.push_back("idle");
  return segments;
}

// ns of wall time per parameter per global update: the window divided by
// the steps all workers computed, divided by the model's parameters.
double NsPerParameterStep(const ThroughputPoint& point) {
  double steps = 0;
  for (const WorkerWindow& worker : point.window.workers) steps += worker.steps;
  return steps > 0 ? point.window.seconds / steps / MlpParameters(point.hidden_units) * 1e9 : 0;
}

double ReferenceNsPerParameterStep(const SingleProcessRun& run, const std::vector<int64_t>& hidden) {
  return run.steps > 0 ? run.train_seconds / run.steps / MlpParameters(hidden) * 1e9 : 0;
}

void ThroughputSection(const Results& results, MarkdownReport& report) {
  MarkdownTable table({"run", "examples/s", "ratio to single process", "global steps/s",
                       "steps per worker in window"});
  std::vector<std::pair<std::string, double>> ratios;
  for (const ThroughputPoint* point : {&*results.async_run, &*results.sync_run}) {
    const double reference = point->reference->examples_per_sec;
    std::vector<std::string> runs;
    for (const SingleProcessRun& run : point->reference_runs) {
      runs.push_back(Fixed(run.examples_per_sec, 0));
    }
    table.AddRow({absl::StrCat("single process (`pstrain train-local`), mean of the runs before "
                               "and after ", point->label, " (", absl::StrJoin(runs, ", "), ")"),
                  Fixed(reference, 0), "1.00", "", ""});
    std::vector<std::string> steps;
    for (const WorkerWindow& worker : point->window.workers) steps.push_back(Fixed(worker.steps, 0));
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
    report.Target(absl::StrCat(label, " examples/s >= ", Fixed(goal, 1),
                               "x the single-process trainer"),
                  ratio >= goal, absl::StrCat(Fixed(ratio, 2), "x"));
  }
}

void BreakdownSection(const Results& results, MarkdownReport& report) {
  std::vector<std::string> header = {"run", "worker", "steps"};
  for (const std::string& segment : BreakdownSegments()) header.push_back(segment + " ms");
  header.push_back("total ms");
  header.push_back("push latency ms");
  MarkdownTable table(header);
  for (const ThroughputPoint* point : {&*results.async_run, &*results.sync_run}) {
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
  const double reference_ms = kBatch / results.fashion_reference->examples_per_sec * 1e3;
  report.SubHeading("Step-time breakdown per worker (mean ms per step in the window)");
  report.Paragraph(absl::StrCat(
      "From `pstrain_worker_step_phase_seconds` (sum differences over the window, divided by the "
      "worker's steps); idle is the window's wall time not in any phase (data-lease and "
      "progress calls, the wait for a lease's last push). Push latency "
      "(`pstrain_worker_push_latency_seconds`) is per push; async overlaps it with the next "
      "pull, so only push_wait counts in the step. The single-process trainer takes ",
      Fixed(reference_ms, 2), " ms per step of 128 (the reference of the async run).",
      FLAGS_svg.empty() ? "" : absl::StrCat(" Chart: `", FLAGS_svg, "`.")));
  report.Table(table);
}

void AccuracySection(const Results& results, MarkdownReport& report) {
  const TargetRun& run = *results.accuracy;
  MarkdownTable table({"submit to evaluation at target (s)", "checkpoint step", "epoch",
                       "test accuracy", "first evaluation (step, s)", "evaluations",
                       "job end"});
  const std::string first =
      run.evaluations.empty()
          ? "none"
          : absl::StrCat(run.evaluations.front().step, ", ",
                         Fixed(run.evaluations.front().seconds, 2));
  table.AddRow({run.reached ? Fixed(run.seconds, 2) : "not reached",
                run.reached ? absl::StrCat(run.step) : "",
                run.reached ? Fixed(static_cast<double>(run.step) * kBatch / kTrainExamples, 2) : "",
                run.reached ? Fixed(run.accuracy, 4) : "", first,
                absl::StrCat(run.evaluations.size()),
                absl::StrCat(JobState_Name(run.final_status.state()), ", ",
                             StopReason_Name(run.final_status.stop_reason()))});
  std::vector<std::string> curve;
  for (const EvaluationPoint& point : run.evaluations) {
    curve.push_back(absl::StrCat(point.step, ": ", Fixed(point.accuracy, 4)));
  }
  report.SubHeading(absl::StrCat("Time to ", Fixed(FLAGS_target_accuracy * 100, 0),
                                 "% test accuracy (async, 1 ps + 2 workers)"));
  report.Paragraph(absl::StrCat(
      "Adam 0.001",
      FLAGS_cosine_decay_steps > 0
          ? absl::StrCat(" decaying to 0.0001 by a cosine over ", FLAGS_cosine_decay_steps,
                         " steps (as examples/fashion_mnist_mlp.pbtxt)")
          : " constant",
      ", batch 128; a checkpoint every ", FLAGS_checkpoint_every_steps,
      " global steps, each evaluated on the 10,000 test images (eval.throttle_secs 0); the job "
      "stops on stop.target_metric_value. Timed from SubmitJob to the WatchJob event of the "
      "first evaluation at or above the target; the cluster was already running. An epoch is "
      "469 global steps of 128."));
  report.Table(table);
  report.Paragraph(
      absl::StrCat("Test accuracy by checkpoint step: ", absl::StrJoin(curve, ", "), "."));
  report.Target(absl::StrCat(Fixed(FLAGS_target_accuracy * 100, 0),
                             "% test accuracy in under 20 s from submit"),
                run.reached && run.seconds < 20,
                run.reached ? absl::StrCat(Fixed(run.seconds, 2), " s") : "not reached");
}

// The workers' mean ms per step by phase and idle, "a / b / c / d / e".
std::string MeanPhasesText(const ThroughputWindow& window) {
  std::vector<double> mean(StepPhases().size() + 1, 0);
  for (const WorkerWindow& worker : window.workers) {
    std::vector<double> ms = PhaseMsPerStep(worker, window.seconds);
    for (size_t i = 0; i < ms.size(); ++i) mean[i] += ms[i] / window.workers.size();
  }
  std::vector<std::string> text;
  for (double ms : mean) text.push_back(Fixed(ms, ms >= 100 ? 0 : 1));
  return absl::StrJoin(text, " / ");
}

std::string MeanPushLatencyText(const ThroughputWindow& window) {
  double pushes = 0, seconds = 0;
  for (const WorkerWindow& worker : window.workers) {
    pushes += worker.pushes;
    seconds += worker.push_seconds;
  }
  return pushes > 0 ? Fixed(seconds / pushes * 1e3, 1) : "";
}

void ModelSweepSection(const Results& results, MarkdownReport& report) {
  MarkdownTable table({"model", "parameters", "cluster examples/s", "single process examples/s",
                       "ratio", "cluster ns/parameter/step", "single process ns/parameter/step",
                       "steps per worker", "worker ms per step: data_wait / pull / compute / "
                       "push_wait / idle", "push latency ms"});
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

void WorkerSweepSection(const Results& results, MarkdownReport& report) {
  MarkdownTable table({"workers", "examples/s", "ratio to 1 worker", "ratio to single process",
                       "ms per step per worker", "ns/parameter/step",
                       "worker ms per step: data_wait / pull / compute / push_wait / idle",
                       "push latency ms"});
  const double one = results.worker_sweep.front().window.ExamplesPerSecond();
  for (const ThroughputPoint& point : results.worker_sweep) {
    double steps = 0;
    for (const WorkerWindow& worker : point.window.workers) steps += worker.steps;
    const double per_worker_ms = steps > 0 ? point.window.seconds / (steps / point.workers) * 1e3 : 0;
    table.AddRow({point.label, Fixed(point.window.ExamplesPerSecond(), 0),
                  Fixed(point.window.ExamplesPerSecond() / one, 2),
                  point.reference.has_value()
                      ? Fixed(point.window.ExamplesPerSecond() / point.reference->examples_per_sec, 2)
                      : "",
                  Fixed(per_worker_ms, 2), Fixed(NsPerParameterStep(point), 2),
                  MeanPhasesText(point.window), MeanPushLatencyText(point.window)});
  }
  report.SubHeading("Scaling with the workers (async, 1 ps, Fashion-MNIST MLP)");
  report.Paragraph(absl::StrCat(
      "A new cluster per worker count; the single-process trainer ran just before the sweep. "
      "The machine has ", std::thread::hardware_concurrency(),
      " cores, shared by the parameter server, the workers and the coordinator."));
  report.Table(table);
}

// Adds what was measured, the command and each part's figures to `report`.
void Report(const Results& results, const std::string& command, MarkdownReport& report) {
  report.Paragraph(absl::StrCat(
      "Real processes on loopback as `pstrain local` starts them (coordinator, parameter "
      "server, workers, evaluator), training an MLP on the real Fashion-MNIST "
      "(Debian's dataset-fashion-mnist), Adam 0.001, batch 128. Throughput is measured over a "
      "window after every worker has trained and a warm-up (",
      Fixed(FLAGS_warmup_secs, 0), " s; window ", Fixed(FLAGS_window_secs, 0), " s, ",
      Fixed(FLAGS_sweep_window_secs, 0), " s for the scaling points) by scraping each worker's "
      "`/metrics` before and after, so start-up is not counted. The reference is the "
      "single-process trainer (`pstrain train-local`, its own process, one compute thread) on "
      "the same spec, run in the same benchmark run."));
  report.Command(command);
  if (results.async_run.has_value()) {
    ThroughputSection(results, report);
    BreakdownSection(results, report);
  }
  if (results.accuracy.has_value()) AccuracySection(results, report);
  if (!results.model_sweep.empty()) ModelSweepSection(results, report);
  if (!results.worker_sweep.empty()) WorkerSweepSection(results, report);
}

std::string BreakdownSvg(const Results& results) {
  StepBreakdownChart chart;
  chart.title = "Worker step time by phase: MLP 784-256-128-10, 1 ps + 2 workers";
  chart.subtitle = absl::StrFormat(
      "Fashion-MNIST, batch 128, mean over a %.0f s window; idle = window time outside the "
      "phases",
      FLAGS_window_secs);
  chart.segments = BreakdownSegments();
  chart.reference_ms = kBatch / results.fashion_reference->examples_per_sec * 1e3;
  chart.reference_label = "single process";
  for (const ThroughputPoint* point : {&*results.async_run, &*results.sync_run}) {
    for (const WorkerWindow& worker : point->window.workers) {
      chart.bars.push_back({{worker.task, point->label}, PhaseMsPerStep(worker, point->window.seconds)});
    }
  }
  return DrawStepBreakdownSvg(chart);
}

// ------------------------------------------------------------- setup --

absl::Status ParseSettings(Settings& settings) {
  for (absl::string_view part : absl::StrSplit(FLAGS_parts, ',', absl::SkipEmpty())) {
    if (part != "e2e" && part != "accuracy" && part != "scaling") {
      return absl::InvalidArgumentError(
          absl::StrCat("--parts: unknown part '", part, "'; expected e2e, accuracy, scaling"));
    }
    settings.parts.insert(std::string(part));
  }
  if (settings.parts.empty()) return absl::InvalidArgumentError("--parts names no part");
  for (absl::string_view size : absl::StrSplit(FLAGS_model_sizes, ',', absl::SkipEmpty())) {
    double value = 0;
    if (!absl::SimpleAtod(size, &value) || value < 1e4 || value > 5e8) {
      return absl::InvalidArgumentError(
          absl::StrCat("--model_sizes: '", size, "' is not a parameter count in [1e4, 5e8]"));
    }
    settings.model_sizes.push_back(static_cast<int64_t>(value));
  }
  for (absl::string_view count : absl::StrSplit(FLAGS_worker_counts, ',', absl::SkipEmpty())) {
    int value = 0;
    if (!absl::SimpleAtoi(count, &value) || value < 1 || value > 64) {
      return absl::InvalidArgumentError(
          absl::StrCat("--worker_counts: '", count, "' is not a worker count in [1, 64]"));
    }
    settings.worker_counts.push_back(value);
  }
  if (settings.parts.count("scaling") &&
      (settings.model_sizes.empty() || settings.worker_counts.empty())) {
    return absl::InvalidArgumentError("--model_sizes and --worker_counts must not be empty");
  }
  if (!(FLAGS_window_secs > 0) || !(FLAGS_sweep_window_secs > 0) || FLAGS_warmup_secs < 0 ||
      FLAGS_reference_steps < 1) {
    return absl::InvalidArgumentError(
        "--window_secs and --sweep_window_secs must be > 0, --warmup_secs >= 0, "
        "--reference_steps >= 1");
  }
  for (const char* name :
       {"pstrain", "pstrain-coordinator", "pstrain-ps", "pstrain-worker", "pstrain-evaluator"}) {
    absl::StatusOr<std::string> found = LocateBinary(name, FLAGS_bin_dir);
    if (!found.ok()) {
      return absl::NotFoundError(absl::StrCat(
          found.status().message(),
          ". Build them first: bazel build -c opt //bench/cluster:cluster_bench //client:pstrain"));
    }
  }
  if (!std::filesystem::exists(FLAGS_data_dir + "/train-images-idx3-ubyte.gz")) {
    return absl::NotFoundError(absl::StrCat(
        "no Fashion-MNIST in ", FLAGS_data_dir,
        " (train-images-idx3-ubyte.gz); apt-get install dataset-fashion-mnist or pass --data_dir"));
  }
  settings.work_dir = FLAGS_work_dir;
  if (settings.work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/pstrain-cluster-bench-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError("cannot create a work folder under $TMPDIR; pass --work_dir");
    }
    settings.work_dir = pattern;
  }
  settings.checkpoint_root = settings.work_dir + "/checkpoints";
  std::error_code error;
  std::filesystem::create_directories(settings.checkpoint_root, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot create ", settings.checkpoint_root, ": ", error.message()));
  }
  return absl::OkStatus();
}

absl::Status Run(const std::string& command) {
  Settings settings;
  if (absl::Status parsed = ParseSettings(settings); !parsed.ok()) return parsed;
  Results results;
  // Records the load average at the start.
  MarkdownReport report("End-to-end training on the local cluster");
  Progress(absl::StrCat("parts ", absl::StrJoin(settings.parts, ","), "; logs and checkpoints in ",
                        settings.work_dir, "; load average ", LoadAverage()));

  const bool e2e = settings.parts.count("e2e") > 0;
  const bool accuracy = settings.parts.count("accuracy") > 0;
  const bool scaling = settings.parts.count("scaling") > 0;
  if (e2e || accuracy || scaling) {
    absl::StatusOr<std::unique_ptr<BenchCluster>> cluster = StartCluster(settings, 2);
    if (!cluster.ok()) return cluster.status();
    if (e2e) {
      if (absl::Status status = RunE2e(settings, **cluster, results); !status.ok()) return status;
    }
    if (accuracy) {
      if (absl::Status status = RunAccuracy(settings, **cluster, results); !status.ok()) {
        return status;
      }
    }
    if (scaling) {
      if (absl::Status status = RunModelSweep(settings, **cluster, results); !status.ok()) {
        return status;
      }
    }
    if (absl::Status stopped = (*cluster)->Stop(); !stopped.ok()) return stopped;
  }
  if (scaling) {
    if (absl::Status status = RunWorkerSweep(settings, results); !status.ok()) return status;
  }

  Report(results, command, report);
  if (FLAGS_report.empty()) {
    std::printf("%s", report.Render().c_str());
  } else if (absl::Status written = report.WriteTo(FLAGS_report); !written.ok()) {
    return written;
  }
  if (e2e && !FLAGS_svg.empty()) {
    if (absl::Status written = WriteFile(FLAGS_svg, BreakdownSvg(results)); !written.ok()) {
      return written;
    }
  }
  // Checkpoints of the large models are big; the logs stay for a look.
  std::error_code ignored;
  std::filesystem::remove_all(settings.checkpoint_root, ignored);
  Progress(absl::StrCat("done; report ", FLAGS_report.empty() ? "on stdout" : FLAGS_report,
                        FLAGS_svg.empty() || !e2e ? "" : absl::StrCat(", chart ", FLAGS_svg)));
  return absl::OkStatus();
}

}  // namespace
}  // namespace bench
}  // namespace pstrain

int main(int argc, char** argv) {
  std::vector<std::string> words = {"bazel-bin/bench/cluster/cluster_bench"};
  for (int i = 1; i < argc; ++i) words.push_back(argv[i]);
  gflags::SetUsageMessage(
      "end-to-end benchmarks of a local pstrain cluster against the single-process trainer");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  absl::Status status = pstrain::bench::Run(absl::StrJoin(words, " "));
  if (!status.ok()) {
    std::fprintf(stderr, "cluster_bench: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
