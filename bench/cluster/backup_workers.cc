#include "bench/cluster/backup_workers.h"

#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/cluster/bench_job.h"
#include "bench/cluster/process_pauser.h"
#include "bench/cluster/throughput_measurement.h"

namespace pstrain {
namespace bench {
namespace {

// The sync job of the e2e part with `replicas_to_aggregate`.
std::string SyncSpec(ClusterBenchSettings& settings, int replicas_to_aggregate) {
  BenchJob job;
  job.name = replicas_to_aggregate > 0 ? "bench-sync-backup" : "bench-sync";
  job.data_dir = settings.data_dir;
  job.model_dir = settings.NewModelDir(job.name);
  job.hidden_units = FashionMlp();
  job.sync = true;
  job.replicas_to_aggregate = replicas_to_aggregate;
  return BenchJobSpecText(job);
}

// One window on `cluster`, with `slowing` cycling its worker when set.
absl::StatusOr<BackupRun> MeasureRun(ClusterBenchSettings& settings, BenchCluster& cluster,
                                     int replicas_to_aggregate, ProcessPauser* slowing,
                                     const std::string& slowed_what) {
  const int workers = cluster.num_workers();
  const std::string what = absl::StrCat(
      "sync, ", replicas_to_aggregate > 0 ? absl::StrCat("replicas_to_aggregate ",
                                                         replicas_to_aggregate)
                                          : "every worker in each round",
      slowing != nullptr ? absl::StrCat(", ", slowed_what) : ", undisturbed");
  absl::StatusOr<ThroughputWindow> window = MeasureClusterJob(
      settings, cluster, what, SyncSpec(settings, replicas_to_aggregate), settings.window, slowing);
  if (!window.ok()) return window.status();
  BackupRun run;
  run.workers = workers;
  run.replicas = replicas_to_aggregate > 0 ? replicas_to_aggregate : workers;
  run.slowed = slowing != nullptr;
  run.window = *std::move(window);
  Progress(absl::StrFormat("  backup: %.1f sync rounds/s, %.1f%% of the computed steps late",
                           RoundsPerSecond(run), 100 * LateShare(run)));
  return run;
}

// The undisturbed and the slowed run on a new cluster of `workers`.
absl::Status MeasurePair(ClusterBenchSettings& settings, const PauseCycle& cycle, int workers,
                         int replicas_to_aggregate, BackupResults& results) {
  absl::StatusOr<std::unique_ptr<BenchCluster>> cluster =
      StartCluster(settings, workers, {}, settings.backup_ps);
  if (!cluster.ok()) return cluster.status();
  absl::StatusOr<int> pid = (*cluster)->Pid(results.slowed_task);
  if (!pid.ok()) return pid.status();
  const std::string slowed_what = absl::StrCat(results.slowed_task, " ", results.slowing);
  ProcessPauser pauser(*pid, cycle);
  for (ProcessPauser* slowing : {static_cast<ProcessPauser*>(nullptr), &pauser}) {
    absl::StatusOr<BackupRun> run =
        MeasureRun(settings, **cluster, replicas_to_aggregate, slowing, slowed_what);
    if (!run.ok()) return run.status();
    results.runs.push_back(*std::move(run));
  }
  return (*cluster)->Stop();
}

}  // namespace

absl::StatusOr<BackupResults> RunBackupWorkers(ClusterBenchSettings& settings) {
  absl::StatusOr<PauseCycle> cycle =
      PauseCycle::Make(settings.pause_period, settings.pause_stopped_share);
  if (!cycle.ok()) return cycle.status();
  BackupResults results;
  results.num_ps = settings.backup_ps;
  results.slowing = cycle->Describe();
  Progress(absl::StrCat("backup: sync on ", settings.backup_ps, " ps, 2 workers against 3 with ",
                        "replicas_to_aggregate 2; ", results.slowed_task, " slowed: ",
                        results.slowing));
  if (absl::Status plain = MeasurePair(settings, *cycle, 2, 0, results); !plain.ok()) {
    return plain;
  }
  if (absl::Status backup = MeasurePair(settings, *cycle, 3, 2, results); !backup.ok()) {
    return backup;
  }
  return results;
}

}  // namespace bench
}  // namespace pstrain
