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
//     u = compute + exchange_cpu(K) + other_cpu.
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
};

// What one run of 1 worker and 1 shard on one host shows of the rest of a
// step: its measured wall and CPU (every process of the cluster) per
// worker step, less compute and the exchange (for 1 shard).
struct OtherCosts {
  double wall = 0;
  double cpu = 0;
};
OtherCosts CalibrateOtherCosts(double measured_step_wall, double measured_step_cpu,
                               double compute, double exchange_wall_one_shard,
                               double exchange_cpu_one_shard);

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
