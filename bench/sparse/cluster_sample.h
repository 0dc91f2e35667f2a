#ifndef PSTRAIN_BENCH_SPARSE_CLUSTER_SAMPLE_H_
#define PSTRAIN_BENCH_SPARSE_CLUSTER_SAMPLE_H_

// What the sparse benchmark reads from a running local cluster at one
// moment: the parameter servers' and workers' counters from their /metrics
// pages and each shard's resident memory from /proc.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/local_cluster.h"

namespace pstrain {

struct ShardSample {
  int64_t rss_bytes = 0;   // VmRSS
  double deep_rows = 0;    // pstrain_ps_embedding_rows of deep/embedding
  double wide_rows = 0;    // ... of wide/weights
  double table_bytes = 0;  // pstrain_ps_embedding_bytes, both tables
  double evictions = 0;    // pstrain_ps_embedding_evictions_total, both tables
  double pull_bytes = 0;   // pstrain_ps_pull_bytes_total (dense and rows)
};

struct ClusterSample {
  absl::Time time;
  std::vector<ShardSample> shards;  // ps/0, ps/1, ...
  // Summed over the workers.
  double examples = 0;  // pstrain_worker_examples_total
  double steps = 0;     // pstrain_worker_steps_total
  // Seconds the workers' steps waited for their batches
  // (pstrain_worker_step_phase_seconds of phase data_wait).
  double data_wait_seconds = 0;
  // CPU seconds used so far (user + system), by role.
  double coordinator_cpu_seconds = 0;
  double ps_cpu_seconds = 0;
  double worker_cpu_seconds = 0;

  double DeepRows() const;
  double WideRows() const;
  double TableBytes() const;
  double Evictions() const;
  double PullBytes() const;
  int64_t RssBytes() const;
};

// Reads every process of `cluster`: the /metrics pages of the parameter
// servers and workers, /proc of all. The embedding
// series read as 0 until the job has created its tables.
// Unavailable: a /metrics page or /proc/<pid>/status cannot be read (the
// process is gone); NotFound: a counter every process exports is missing.
absl::StatusOr<ClusterSample> SampleCluster(const LocalCluster& cluster);

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SPARSE_CLUSTER_SAMPLE_H_
