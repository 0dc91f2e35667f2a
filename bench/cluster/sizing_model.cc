#include "bench/cluster/sizing_model.h"

#include <algorithm>

namespace pstrain {
namespace bench {

double ContentionShare(int processes, int cores) {
  if (processes <= cores || processes <= 0) return 0;
  return 1.0 - static_cast<double>(cores) / processes;
}

OtherCosts CalibrateOtherCosts(const CalibrationRun& first, const CalibrationRun& second,
                               int host_cores, double compute, double exchange_wall_one_shard,
                               double exchange_cpu_one_shard) {
  // Not below zero: a cluster step cannot cost less than its parts.
  auto other_cpu = [&](const CalibrationRun& run) {
    return std::max(0.0, run.step_cpu - compute - exchange_cpu_one_shard);
  };
  OtherCosts costs;
  costs.wall = std::max(0.0, first.step_wall - compute - exchange_wall_one_shard);
  costs.cpu = other_cpu(first);
  costs.share = ContentionShare(first.processes, host_cores);
  const double second_share = ContentionShare(second.processes, host_cores);
  if (second.processes > 0 && second_share > costs.share) {
    costs.contention_cpu =
        std::max(0.0, (other_cpu(second) - costs.cpu) / (second_share - costs.share));
  }
  return costs;
}

Prediction PredictThroughput(const StepCosts& costs, const ClusterShape& shape) {
  const bool across_hosts = shape.link_bytes_per_second > 0;
  double step_wall = costs.compute + costs.exchange_wall + costs.other_wall;
  if (across_hosts) {
    // The push and the pull each cross the worker's link once.
    step_wall += 2 * shape.model_bytes / shape.link_bytes_per_second;
  }
  Prediction best{shape.workers / step_wall, "workers"};
  auto bound = [&best](double steps_per_second, const char* limit) {
    if (steps_per_second < best.examples_per_second) best = {steps_per_second, limit};
  };
  if (!across_hosts) {
    // Every process's CPU, its share of contention for the cores included.
    const int processes = shape.workers + shape.shards + shape.other_processes;
    const double other_cpu =
        costs.other_cpu +
        costs.contention_cpu * (ContentionShare(processes, shape.host_cores) - costs.other_share);
    const double step_cpu = costs.compute + costs.exchange_cpu + std::max(0.0, other_cpu);
    bound(shape.host_cores / step_cpu, "cores");
  } else {
    // Each shard's link carries B/K in and B/K out per worker step; its
    // cores do half of the exchange's CPU (the receiving and applying
    // side), shared by K shards.
    bound(shape.shards * shape.link_bytes_per_second / shape.model_bytes, "shard links");
    const double shard_cpu = costs.exchange_cpu / 2 / shape.shards;
    if (shard_cpu > 0) bound(shape.host_cores / shard_cpu, "shard cores");
  }
  best.examples_per_second *= shape.batch;
  return best;
}

int ShardsNeeded(const StepCosts& costs, ClusterShape shape, int max_shards) {
  for (shape.shards = 1; shape.shards <= max_shards; ++shape.shards) {
    if (PredictThroughput(costs, shape).limit == "workers") return shape.shards;
  }
  return -1;
}

}  // namespace bench
}  // namespace pstrain
