#include "bench/cluster/throughput_measurement.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/cluster/bench_job.h"
#include "bench/common/text_file.h"
#include "client/binary_locator.h"

namespace pstrain {
namespace bench {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(120);
constexpr absl::Duration kStopTimeout = absl::Seconds(60);

}  // namespace

const std::vector<int64_t>& FashionMlp() {
  static const auto* hidden = new std::vector<int64_t>{256, 128};
  return *hidden;
}

void Progress(const std::string& message) {
  std::fprintf(stderr, "[cluster_bench %s] %s\n",
               absl::FormatTime("%H:%M:%S", absl::Now(), absl::LocalTimeZone()).c_str(),
               message.c_str());
  std::fflush(stderr);
}

absl::StatusOr<SingleProcessRun> MeasureSingleProcess(ClusterBenchSettings& settings,
                                                      const std::vector<int64_t>& hidden,
                                                      int compute_threads) {
  BenchJob job;
  job.name = "single-process";
  job.data_dir = settings.data_dir;
  job.model_dir = settings.NewModelDir("single-process");
  job.hidden_units = hidden;
  job.compute_threads = compute_threads;
  const double scale = static_cast<double>(MlpParameters(FashionMlp())) / MlpParameters(hidden);
  const int64_t steps =
      std::max<int64_t>(5, std::llround(settings.reference_steps * std::min(1.0, scale)));
  Progress(absl::StrCat(
      "single-process trainer, MLP ", MlpShape(hidden), ", ", steps, " steps",
      compute_threads > 1 ? absl::StrCat(", ", compute_threads, " compute threads") : ""));
  const std::string stem = absl::StrCat(settings.work_dir, "/train-local-", settings.next_job);
  absl::StatusOr<std::string> pstrain = LocateBinary("pstrain", settings.bin_dir);
  if (!pstrain.ok()) return pstrain.status();
  if (absl::Status written = WriteTextFile(stem + ".pbtxt", BenchJobSpecText(job)); !written.ok()) {
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

absl::StatusOr<ThroughputWindow> MeasureCluster(ClusterBenchSettings& settings,
                                                BenchCluster& cluster,
                                                const std::vector<int64_t>& hidden, bool sync,
                                                absl::Duration window,
                                                const std::string& train_tfrecord) {
  BenchJob job;
  job.name = sync ? "bench-sync" : "bench-async";
  job.data_dir = settings.data_dir;
  job.train_tfrecord = train_tfrecord;
  job.model_dir = settings.NewModelDir(job.name);
  job.hidden_units = hidden;
  job.sync = sync;
  return MeasureClusterJob(settings, cluster,
                           absl::StrCat(sync ? "sync" : "async", ", MLP ", MlpShape(hidden),
                                        train_tfrecord.empty() ? "" : ", streamed TFRecord"),
                           BenchJobSpecText(job), window);
}

absl::StatusOr<ThroughputWindow> MeasureClusterJob(ClusterBenchSettings& settings,
                                                   BenchCluster& cluster, const std::string& what,
                                                   const std::string& spec_text,
                                                   absl::Duration window, ProcessPauser* slowing) {
  Progress(absl::StrFormat("cluster (%d workers), %s: warm-up %.0f s, window %.0f s",
                           cluster.num_workers(), what, absl::ToDoubleSeconds(settings.warmup),
                           absl::ToDoubleSeconds(window)));
  absl::StatusOr<std::vector<MetricsPage>> before = cluster.ScrapeWorkers();
  if (!before.ok()) return before.status();
  absl::StatusOr<std::string> job_id = cluster.Submit(spec_text);
  if (!job_id.ok()) return job_id.status();
  std::function<absl::Status()> start_slowing;
  if (slowing != nullptr) start_slowing = [slowing] { return slowing->Start(); };
  absl::StatusOr<ThroughputWindow> measured =
      cluster.Measure(*job_id, *before, kStartTimeout, settings.warmup, window,
                      settings.min_window_steps, settings.max_window, start_slowing);
  const absl::Status slowed = slowing != nullptr ? slowing->Stop() : absl::OkStatus();
  absl::Status stopped = cluster.StopAndWait(*job_id, kStopTimeout);
  if (!measured.ok()) return measured.status();
  if (!slowed.ok()) return slowed;
  if (!stopped.ok()) return stopped;
  double steps = 0;
  for (const WorkerWindow& worker : measured->workers) steps += worker.steps;
  Progress(absl::StrFormat("  cluster: %.0f examples/s (%.0f worker steps in %.1f s)",
                           measured->ExamplesPerSecond(), steps, measured->seconds));
  return measured;
}

absl::StatusOr<std::unique_ptr<BenchCluster>> StartCluster(
    ClusterBenchSettings& settings, const BenchClusterLayout& layout,
    const std::vector<std::string>& extra_worker_flags,
    const std::vector<std::string>& extra_coordinator_flags) {
  std::vector<std::string> worker_flags = settings.worker_flags;
  worker_flags.insert(worker_flags.end(), extra_worker_flags.begin(), extra_worker_flags.end());
  std::vector<std::string> coordinator_flags = settings.coordinator_flags;
  coordinator_flags.insert(coordinator_flags.end(), extra_coordinator_flags.begin(),
                           extra_coordinator_flags.end());
  const int ps_processes = layout.num_ps * (1 + layout.ps_replicas);
  Progress(absl::StrCat(
      "starting a local cluster: 1 coordinator, ", ps_processes, " ps",
      layout.ps_replicas > 0 ? absl::StrCat(" (", layout.num_ps, " shards, each with a backup)")
                             : "",
      ", ", layout.num_workers, " workers, 1 evaluator",
      layout.shared_memory ? "" : ", tensors in gRPC messages (--shm=false)",
      worker_flags.empty() ? "" : ", workers with ", absl::StrJoin(worker_flags, " "),
      coordinator_flags.empty() ? "" : ", coordinator with ",
      absl::StrJoin(coordinator_flags, " ")));
  return BenchCluster::Start(layout,
                             absl::StrCat(settings.work_dir, "/cluster-", ps_processes, "ps-",
                                          layout.num_workers, "w-", settings.next_job++),
                             settings.checkpoint_root, settings.bin_dir, coordinator_flags,
                             worker_flags);
}

absl::StatusOr<std::unique_ptr<BenchCluster>> StartCluster(
    ClusterBenchSettings& settings, int workers,
    const std::vector<std::string>& extra_worker_flags, int num_ps) {
  BenchClusterLayout layout;
  layout.num_ps = num_ps;
  layout.num_workers = workers;
  return StartCluster(settings, layout, extra_worker_flags);
}

SingleProcessRun Bracketing(const SingleProcessRun& before, const SingleProcessRun& after) {
  SingleProcessRun mean;
  mean.examples_per_sec = (before.examples_per_sec + after.examples_per_sec) / 2;
  mean.train_seconds = before.train_seconds + after.train_seconds;
  mean.steps = before.steps + after.steps;
  return mean;
}

}  // namespace bench
}  // namespace pstrain
