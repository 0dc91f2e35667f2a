// End-to-end benchmarks of pstrain on a local cluster (coordinator,
// parameter server, workers and evaluator as real processes on loopback),
// each against the single-process trainer measured in the same run:
//   e2e       examples/s of 1 ps + 2 workers, async and sync, on the
//             Fashion-MNIST MLP 784-256-128-10, and each worker's step-time
//             breakdown (drawn to --svg);
//   criteo    wide-and-deep on gzipped Criteo-format logs, held in memory
//             against streamed: examples/s and the workers' data_wait;
//   accuracy  wall time from submit to the evaluation reaching 88% test
//             accuracy;
//   scaling   examples/s as the model grows (about 1M..64M parameters) and
//             as the workers grow (1, 2, 4, 8);
//   backup    sync rounds/s of 2 workers against 3 with replicas_to_aggregate
//             2 (one backup), each undisturbed and with a worker slowed by
//             SIGSTOP/SIGCONT cycles (drawn to --backup_svg);
//   replicas  examples/s of 1 shard + 2 workers async without and with a
//             hot-standby backup (--ps_replicas=1), on shared memory and on
//             gRPC bytes, and the time from a primary's SIGKILL to training
//             again over 10 kills.
// Writes one Markdown section to --report (bench/run_all.sh collects it).
//
//   bazel build -c opt //bench/cluster:cluster_bench //client:pstrain
//   bazel-bin/bench/cluster/cluster_bench --report=cluster.md --svg=bench/step_breakdown.svg

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/cluster/backup_workers.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/cluster/cluster_bench_settings.h"
#include "bench/cluster/criteo_streaming.h"
#include "bench/cluster/dlrm_throughput.h"
#include "bench/cluster/e2e_throughput.h"
#include "bench/cluster/process_pauser.h"
#include "bench/cluster/replica_cost.h"
#include "bench/cluster/replica_figures.h"
#include "bench/cluster/scaling.h"
#include "common/process/allocator_tuning.h"
#include "bench/cluster/throughput_figures.h"
#include "bench/cluster/throughput_measurement.h"
#include "bench/cluster/time_to_accuracy.h"
#include "bench/common/text_file.h"
#include "bench/report/markdown_report.h"
#include "client/binary_locator.h"
#include "gflags/gflags.h"

DEFINE_string(report, "", "write the Markdown section here (default: stdout)");
DEFINE_string(svg, "", "write the step-time breakdown chart here (e2e part; default: none)");
DEFINE_string(backup_svg, "", "write the backup part's rounds/s chart here (default: none)");
DEFINE_string(parts, "e2e,criteo,dlrm,accuracy,scaling,backup,replicas",
              "which parts to run: e2e, criteo, dlrm, accuracy, scaling, backup, replicas");
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
DEFINE_string(shard_counts, "1,2,4",
              "scaling: parameter-server counts of the shard sweep (2 workers each); empty: none");
DEFINE_double(target_accuracy, 0.88, "accuracy part: the test accuracy to reach");
DEFINE_int64(checkpoint_every_steps, 200, "accuracy part: checkpoint (and evaluation) interval");
DEFINE_int64(cosine_decay_steps, 3000,
             "accuracy part: the learning rate decays to a tenth over this many steps (as in "
             "examples/fashion_mnist_mlp.pbtxt); 0: constant");
DEFINE_double(accuracy_timeout_secs, 120, "accuracy part: give up after this");
DEFINE_int32(backup_ps, 2,
             "backup part: parameter servers of its clusters (with several, the coordinator "
             "agrees each round across them: the backup workers' headline case)");
DEFINE_double(pause_period_ms, 300, "backup part: the slowed worker's stop-and-continue period");
DEFINE_double(pause_stopped_share, 2.0 / 3,
              "backup part: the share of each period the slowed worker is stopped, in [0, 1)");
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

// --parts, --model_sizes, --worker_counts and --shard_counts into
// `settings`.
absl::Status ParseLists(ClusterBenchSettings& settings) {
  for (absl::string_view part : absl::StrSplit(FLAGS_parts, ',', absl::SkipEmpty())) {
    if (part != "e2e" && part != "criteo" && part != "dlrm" && part != "accuracy" &&
        part != "scaling" && part != "backup" && part != "replicas") {
      return absl::InvalidArgumentError(
          absl::StrCat("--parts: unknown part '", part,
                       "'; expected e2e, criteo, dlrm, accuracy, scaling, backup, replicas"));
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
  for (absl::string_view count : absl::StrSplit(FLAGS_shard_counts, ',', absl::SkipEmpty())) {
    int value = 0;
    if (!absl::SimpleAtoi(count, &value) || value < 1 || value > 16) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shard_counts: '", count, "' is not a shard count in [1, 16]"));
    }
    settings.shard_counts.push_back(value);
  }
  if (settings.parts.count("scaling") &&
      (settings.model_sizes.empty() || settings.worker_counts.empty())) {
    return absl::InvalidArgumentError("--model_sizes and --worker_counts must not be empty");
  }
  return absl::OkStatus();
}

// The flags' ranges; the binaries and the data where they should be.
absl::Status CheckFlagsAndInputs() {
  if (FLAGS_backup_ps < 1 || FLAGS_backup_ps > 16) {
    return absl::InvalidArgumentError(
        absl::StrCat("--backup_ps must be in [1, 16], got ", FLAGS_backup_ps));
  }
  if (absl::StatusOr<PauseCycle> cycle = PauseCycle::Make(
          absl::Milliseconds(FLAGS_pause_period_ms), FLAGS_pause_stopped_share);
      !cycle.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pause_period_ms and --pause_stopped_share: ", cycle.status().message()));
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
  return absl::OkStatus();
}

// Fills `settings` from the flags and checks them; finds the binaries and
// the data, and creates the work folder.
absl::Status ParseSettings(ClusterBenchSettings& settings) {
  if (absl::Status parsed = ParseLists(settings); !parsed.ok()) return parsed;
  if (absl::Status checked = CheckFlagsAndInputs(); !checked.ok()) return checked;
  settings.data_dir = FLAGS_data_dir;
  settings.bin_dir = FLAGS_bin_dir;
  settings.coordinator_flags = absl::StrSplit(FLAGS_coordinator_flags, ',', absl::SkipEmpty());
  settings.worker_flags = absl::StrSplit(FLAGS_worker_flags, ',', absl::SkipEmpty());
  settings.warmup = absl::Seconds(FLAGS_warmup_secs);
  settings.window = absl::Seconds(FLAGS_window_secs);
  settings.sweep_window = absl::Seconds(FLAGS_sweep_window_secs);
  settings.min_window_steps = FLAGS_min_window_steps;
  settings.max_window = absl::Seconds(FLAGS_max_window_secs);
  settings.reference_steps = FLAGS_reference_steps;
  settings.target_accuracy = FLAGS_target_accuracy;
  settings.checkpoint_every_steps = FLAGS_checkpoint_every_steps;
  settings.cosine_decay_steps = FLAGS_cosine_decay_steps;
  settings.accuracy_timeout = absl::Seconds(FLAGS_accuracy_timeout_secs);
  settings.backup_ps = FLAGS_backup_ps;
  settings.pause_period = absl::Milliseconds(FLAGS_pause_period_ms);
  settings.pause_stopped_share = FLAGS_pause_stopped_share;
  settings.svg_path = FLAGS_svg;
  settings.backup_svg_path = FLAGS_backup_svg;
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

// What every part shares: what is measured, how, and the command.
void AddIntroduction(const ClusterBenchSettings& settings, const std::string& command,
                     MarkdownReport& report) {
  report.Paragraph(absl::StrCat(
      "Real processes on loopback as `pstrain local` starts them (coordinator, parameter "
      "server, workers, evaluator), training an MLP on the real Fashion-MNIST "
      "(Debian's dataset-fashion-mnist), Adam 0.001, batch 128. Throughput is measured over a "
      "window after every worker has trained and a warm-up (",
      Fixed(absl::ToDoubleSeconds(settings.warmup), 0), " s; window ",
      Fixed(absl::ToDoubleSeconds(settings.window), 0), " s, ",
      Fixed(absl::ToDoubleSeconds(settings.sweep_window), 0),
      " s for the scaling points) by scraping each worker's "
      "`/metrics` before and after, so start-up is not counted. The reference is the "
      "single-process trainer (`pstrain train-local`, its own process, one compute thread; "
      "the end-to-end part also runs it with two) on the same spec, run in the same benchmark "
      "run."));
  report.Command(command);
}

// What the parts that ran measured.
struct PartResults {
  std::optional<E2eResults> e2e;
  std::optional<CriteoStreamingResults> criteo;
  std::optional<DlrmResults> dlrm;
  std::optional<TargetRun> accuracy;
  ScalingResults scaling;
  std::optional<BackupResults> backup;
  std::optional<ReplicaResults> replicas;
};

// The parts that share one cluster of 1 ps and 2 workers, started only
// when one of them runs: e2e, criteo, dlrm, accuracy and the model sweep.
absl::Status RunSharedClusterParts(ClusterBenchSettings& settings, PartResults& results) {
  const auto runs = [&](const char* part) { return settings.parts.count(part) > 0; };
  if (!runs("e2e") && !runs("criteo") && !runs("dlrm") && !runs("accuracy") && !runs("scaling")) {
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<BenchCluster>> cluster = StartCluster(settings, 2);
  if (!cluster.ok()) return cluster.status();
  if (runs("e2e")) {
    absl::StatusOr<E2eResults> measured = RunE2eThroughput(settings, **cluster);
    if (!measured.ok()) return measured.status();
    results.e2e = *std::move(measured);
  }
  if (runs("criteo")) {
    absl::StatusOr<CriteoStreamingResults> measured = RunCriteoStreaming(settings, **cluster);
    if (!measured.ok()) return measured.status();
    results.criteo = *std::move(measured);
  }
  if (runs("dlrm")) {
    absl::StatusOr<DlrmResults> measured = RunDlrmThroughput(settings, **cluster);
    if (!measured.ok()) return measured.status();
    results.dlrm = *std::move(measured);
  }
  if (runs("accuracy")) {
    absl::StatusOr<TargetRun> run = RunTimeToAccuracy(settings, **cluster);
    if (!run.ok()) return run.status();
    results.accuracy = *std::move(run);
  }
  if (runs("scaling")) {
    if (absl::Status status = RunModelSweep(settings, **cluster, results.scaling); !status.ok()) {
      return status;
    }
  }
  return (*cluster)->Stop();
}

// The parts that start clusters of their own, after the shared one has
// stopped: the worker sweep, the backup and the replicas parts.
absl::Status RunOwnClusterParts(ClusterBenchSettings& settings, PartResults& results) {
  if (settings.parts.count("scaling") > 0) {
    ProbeExchanges(settings, results.scaling);
    if (absl::Status status = RunWorkerSweep(settings, results.scaling); !status.ok()) {
      return status;
    }
    if (absl::Status status = RunShardSweep(settings, results.scaling); !status.ok()) {
      return status;
    }
  }
  if (settings.parts.count("backup") > 0) {
    absl::StatusOr<BackupResults> measured = RunBackupWorkers(settings);
    if (!measured.ok()) return measured.status();
    results.backup = *std::move(measured);
  }
  if (settings.parts.count("replicas") > 0) {
    absl::StatusOr<ReplicaResults> measured = RunReplicas(settings);
    if (!measured.ok()) return measured.status();
    results.replicas = *std::move(measured);
  }
  return absl::OkStatus();
}

// The report and the charts of the parts that ran.
absl::Status WriteOutputs(const ClusterBenchSettings& settings, const std::string& command,
                          const PartResults& results, MarkdownReport& report) {
  AddIntroduction(settings, command, report);
  if (results.e2e.has_value()) AddE2eSections(*results.e2e, settings.svg_path, report);
  if (results.criteo.has_value()) AddCriteoSection(*results.criteo, report);
  if (results.dlrm.has_value()) AddDlrmSection(*results.dlrm, report);
  if (results.accuracy.has_value()) AddAccuracySection(*results.accuracy, settings, report);
  AddScalingSections(results.scaling, report);
  if (results.backup.has_value()) {
    AddBackupSection(*results.backup, settings.backup_svg_path, report);
  }
  if (results.replicas.has_value()) AddReplicaSection(*results.replicas, report);
  if (FLAGS_report.empty()) {
    std::printf("%s", report.Render().c_str());
  } else if (absl::Status written = report.WriteTo(FLAGS_report); !written.ok()) {
    return written;
  }
  if (results.e2e.has_value() && !settings.svg_path.empty()) {
    if (absl::Status written =
            WriteTextFile(settings.svg_path, BreakdownSvg(*results.e2e, settings.window));
        !written.ok()) {
      return written;
    }
  }
  if (results.backup.has_value() && !settings.backup_svg_path.empty()) {
    return WriteTextFile(settings.backup_svg_path, BackupSvg(*results.backup));
  }
  return absl::OkStatus();
}

absl::Status Run(const std::string& command) {
  ClusterBenchSettings settings;
  if (absl::Status parsed = ParseSettings(settings); !parsed.ok()) return parsed;
  // Records the load average at the start.
  MarkdownReport report("End-to-end training on the local cluster");
  Progress(absl::StrCat("parts ", absl::StrJoin(settings.parts, ","), "; logs and checkpoints in ",
                        settings.work_dir, "; load average ", LoadAverage()));
  PartResults results;
  if (absl::Status ran = RunSharedClusterParts(settings, results); !ran.ok()) return ran;
  if (absl::Status ran = RunOwnClusterParts(settings, results); !ran.ok()) return ran;
  if (absl::Status written = WriteOutputs(settings, command, results, report); !written.ok()) {
    return written;
  }
  // Checkpoints of the large models are big; the logs stay for a look.
  std::error_code ignored;
  std::filesystem::remove_all(settings.checkpoint_root, ignored);
  std::vector<std::string> charts;
  if (results.e2e.has_value() && !settings.svg_path.empty()) charts.push_back(settings.svg_path);
  if (results.backup.has_value() && !settings.backup_svg_path.empty()) {
    charts.push_back(settings.backup_svg_path);
  }
  Progress(absl::StrCat("done; report ", FLAGS_report.empty() ? "on stdout" : FLAGS_report,
                        charts.empty() ? "" : absl::StrCat(", charts ", absl::StrJoin(charts, ", "))));
  return absl::OkStatus();
}

}  // namespace
}  // namespace bench
}  // namespace pstrain

int main(int argc, char** argv) {
  // The scaling part's exchange probes run shards in this process: tuned
  // as the daemons are, before any thread starts.
  pstrain::TuneAllocatorForLargeBuffers();
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
