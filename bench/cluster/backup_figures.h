#ifndef PSTRAIN_BENCH_CLUSTER_BACKUP_FIGURES_H_
#define PSTRAIN_BENCH_CLUSTER_BACKUP_FIGURES_H_

// What the backup part of cluster_bench measured (backup_workers.h runs
// it), the figures read from it, its Markdown section and its chart.

#include <string>
#include <vector>

#include "bench/cluster/bench_cluster.h"
#include "bench/report/markdown_report.h"

namespace pstrain {
namespace bench {

// One sync run's window.
struct BackupRun {
  int workers = 2;
  // Gradients each round applies: the job's replicas_to_aggregate, or the
  // workers when it is 0.
  int replicas = 2;
  bool slowed = false;
  ThroughputWindow window;
};

struct BackupResults {
  int num_ps = 1;
  std::string slowed_task = "worker/1";
  std::string slowing;  // PauseCycle::Describe()
  // In this order: 2 workers undisturbed, 2 slowed, 3 (one backup)
  // undisturbed, 3 slowed.
  std::vector<BackupRun> runs;
};

// Sync rounds the parameter servers applied per second of the window.
double RoundsPerSecond(const BackupRun& run);
// The examples those rounds applied per second: rounds x replicas x batch.
double AppliedExamplesPerSecond(const BackupRun& run);
// The examples the workers computed per second, applied or not.
double ComputedExamplesPerSecond(const BackupRun& run);
// The share of the workers' steps whose push came too late for its round
// (computed, then refused and its batch re-queued); 0 when none computed.
double LateShare(const BackupRun& run);

// The sentence that reads the four runs: what each job kept of its
// undisturbed rounds/s with a worker slowed, and what the backup cost
// undisturbed. Needs all four runs.
std::string BackupReading(const BackupResults& results, unsigned cores);

// The table of the four runs, the reading, the target and the chart's
// name when `svg_path` is not empty; nothing without four runs.
void AddBackupSection(const BackupResults& results, const std::string& svg_path,
                      MarkdownReport& report);

// Rounds/s of the four runs as an SVG bar chart.
std::string BackupSvg(const BackupResults& results);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_BACKUP_FIGURES_H_
