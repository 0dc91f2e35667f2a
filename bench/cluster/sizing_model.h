#ifndef PSTRAIN_BENCH_CLUSTER_SIZING_MODEL_H_
#define PSTRAIN_BENCH_CLUSTER_SIZING_MODEL_H_

// A model of a cluster's throughput (examples/s, async) from what one
// worker's step costs, measured piece by piece: its compute (the
// single-process trainer on the same model), its push and pull (the
// worker's client against in-process shards: bench/ps/wire_probe.h), and
// what else a step costs in a real cluster (wakeups, progress reports,
// the data pipeline, the coordinator and evaluator), taken from one real
// run of one worker and one shard. docs/sizing.md explains it and checks
// it against real runs.
//
// Each worker step takes wall time
//     s = compute + exchange_wall(K) + other_wall            (+ 2B/L across hosts)
// and CPU time, all processes together,
//     u = compute + exchange_cpu(K) + other_cpu    (+ contention on one host).
// N workers then make at most N/s steps a second, and the cores they share
// at most C/u; across hosts each shard's link carries B/K each way per
// worker step (at most K L / B steps a second) and each shard's cores do
// its 1/K of the exchange's shard side.

#include <string>

namespace pstrain {
namespace bench {

// The costs of one worker step, in seconds; exchange costs for the shard
// count the prediction is for.
struct StepCosts {
  double compute = 0;
  double exchange_wall = 0;
  double exchange_cpu = 0;
  double other_wall = 0;
  double other_cpu = 0;
  // On one host, the CPU a step costs more when its processes outnumber the
  // cores: a process woken for a message finds its core free about C/P of
  // the time with P processes on C cores, and otherwise waits for it or
  // takes it from another (a context switch more). other_cpu was measured
  // at ContentionShare `other_share`; a shape whose share differs is
  // charged contention_cpu for each unit of difference. (Across hosts no
  // bound depends on the other CPU.)
  double contention_cpu = 0;
  double other_share = 0;
};

// One measured run of a cluster on one host: per worker step, its wall
// time and the CPU of every process of the cluster, and how many processes
// shared the host's cores.
struct CalibrationRun {
  double step_wall = 0;
  double step_cpu = 0;
  int processes = 0;
};

// What two runs on one host with 1 shard (1 worker, and more) show of the
// rest of a step, less compute and the exchange (for 1 shard): the first
// run's wall time and CPU (at its ContentionShare, `share`), and what
// contention adds (StepCosts.contention_cpu), the line through both runs'
// CPU. Without `second` (processes 0) nothing is added for contention.
struct OtherCosts {
  double wall = 0;
  double cpu = 0;
  double share = 0;
  double contention_cpu = 0;
};
OtherCosts CalibrateOtherCosts(const CalibrationRun& first, const CalibrationRun& second,
                               int host_cores, double compute, double exchange_wall_one_shard,
                               double exchange_cpu_one_shard);

// The share of wakeups that find their core taken, as StepCosts charges
// it: 1 - cores / processes, and 0 when every process has a core.
double ContentionShare(int processes, int cores);

struct ClusterShape {
  int workers = 1;
  int shards = 1;
  int batch = 128;
  // One host: every process shares `host_cores`. Across hosts
  // (link_bytes_per_second > 0): each worker and each shard has a host of
  // `host_cores` and a link of that speed each way.
  int host_cores = 2;
  double link_bytes_per_second = 0;
  double model_bytes = 0;  // float32 parameters, pushed and pulled each step
  // On one host, processes besides workers and shards sharing the cores
  // (the coordinator and the evaluator).
  int other_processes = 2;
};

struct Prediction {
  double examples_per_second = 0;
  // What bounds it: "workers" (each worker's own step time), "cores" (the
  // host's cores, one host), "shard links" or "shard cores" (across hosts).
  std::string limit;
};

Prediction PredictThroughput(const StepCosts& costs, const ClusterShape& shape);

// Across hosts: the fewest shards (up to `max_shards`) whose links and
// cores keep up with `shape.workers` workers, so that the workers' own
// steps bound the throughput; -1 when even `max_shards` do not.
int ShardsNeeded(const StepCosts& costs, ClusterShape shape, int max_shards = 64);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_SIZING_MODEL_H_
