#ifndef PSTRAIN_BENCH_CLUSTER_REPLICA_FIGURES_H_
#define PSTRAIN_BENCH_CLUSTER_REPLICA_FIGURES_H_

// What the replicas part of cluster_bench measured (replica_cost.h runs
// it), the figures read from it and its Markdown section.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/cluster/bench_cluster.h"
#include "bench/report/markdown_report.h"

namespace pstrain {
namespace bench {

// One async window on a cluster of its own.
struct ReplicaCostRun {
  bool shared_memory = true;  // else tensors in the gRPC messages
  bool replicated = false;    // --ps_replicas=1
  ThroughputWindow window;
};

// One job whose primary was killed once.
struct FailoverKill {
  std::string job_id;
  std::string killed;        // the primary's task, "ps/0"
  int64_t step_at_kill = 0;  // the job's global step just before the kill
  // From the SIGKILL to the job's global step kFailoverStepsPastKill past
  // step_at_kill.
  double seconds_to_training = 0;
  // The job's status once stopped.
  int32_t failovers = 0;
  int32_t rollbacks = 0;
  std::string last_failover;
  std::string last_rollback;
};

// How far past its step at the kill a job's global step must move to count
// as training again.
constexpr int64_t kFailoverStepsPastKill = 20;

struct ReplicaResults {
  // In this order: shared memory without replicas, with; gRPC without,
  // with.
  std::vector<ReplicaCostRun> cost_runs;
  // The failover cluster's coordinator settings.
  double heartbeat_interval_secs = 0.5;
  double heartbeat_timeout_secs = 4;
  // A job's primary is killed once its global step has passed this.
  int64_t kill_after_step = 200;
  std::vector<FailoverKill> kills;
};

// The replicated run's examples/s over the unreplicated one's on the same
// transport; 0 when either is missing or measured nothing.
double ReplicatedRatio(const ReplicaResults& results, bool shared_memory);

// The mean time an acknowledgement waited for the backup in the window, in
// ms; 0 when none waited.
double MeanReplicationWaitMs(const ThroughputWindow& window);

// The median and the largest seconds_to_training of the kills; 0 without.
double MedianSecondsToTraining(const std::vector<FailoverKill>& kills);
double WorstSecondsToTraining(const std::vector<FailoverKill>& kills);

// FailedPrecondition naming the first kill whose job did not fail over
// exactly once without a rollback; OK otherwise.
absl::Status CheckEveryKillFailedOverOnce(const std::vector<FailoverKill>& kills);

// The cost table and the failover table with their readings; nothing
// without four cost runs.
void AddReplicaSection(const ReplicaResults& results, MarkdownReport& report);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_REPLICA_FIGURES_H_
