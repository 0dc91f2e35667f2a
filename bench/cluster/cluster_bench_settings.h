#ifndef PSTRAIN_BENCH_CLUSTER_CLUSTER_BENCH_SETTINGS_H_
#define PSTRAIN_BENCH_CLUSTER_CLUSTER_BENCH_SETTINGS_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace pstrain {
namespace bench {

// How one run of cluster_bench measures, from its flags (cluster_bench.cc
// documents each default), and where it keeps its files. Every part reads
// it; the measurements number their files with next_job. Not thread-safe.
struct ClusterBenchSettings {
  // Of "e2e", "criteo", "accuracy", "scaling", "backup", "replicas".
  std::set<std::string> parts;
  std::string data_dir;         // Fashion-MNIST IDX files
  std::string bin_dir;          // empty: this program's runfiles
  std::vector<std::string> coordinator_flags;
  std::vector<std::string> worker_flags;

  // Throughput windows (e2e and scaling).
  absl::Duration warmup;
  absl::Duration window;        // e2e
  absl::Duration sweep_window;  // each scaling point
  int min_window_steps = 2;
  absl::Duration max_window;
  int64_t reference_steps = 1500;  // single process, 784-256-128-10 MLP
  std::vector<int64_t> model_sizes;
  std::vector<int> worker_counts;
  std::vector<int> shard_counts;

  // Time to accuracy.
  double target_accuracy = 0.88;
  int64_t checkpoint_every_steps = 200;
  int64_t cosine_decay_steps = 3000;
  absl::Duration accuracy_timeout;

  // Backup workers: parameter servers of its clusters, and how the slowed
  // worker is paused (PauseCycle: a period, the share of it stopped).
  int backup_ps = 2;
  absl::Duration pause_period;
  double pause_stopped_share = 0;

  std::string svg_path;         // the e2e step-time chart; empty: none
  std::string backup_svg_path;  // the backup part's rounds/s chart; empty: none
  std::string work_dir;  // logs and spec files
  std::string checkpoint_root;
  int next_job = 0;  // numbers model_dirs and spec files

  // A new model_dir under checkpoint_root: a job resumes from an existing one.
  std::string NewModelDir(const std::string& name) {
    return checkpoint_root + "/" + name + "-" + std::to_string(next_job++);
  }
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_CLUSTER_BENCH_SETTINGS_H_
