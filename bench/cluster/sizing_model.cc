#include "bench/cluster/sizing_model.h"

#include <algorithm>

namespace pstrain {
namespace bench {

OtherCosts CalibrateOtherCosts(double measured_step_wall, double measured_step_cpu,
                               double compute, double exchange_wall_one_shard,
                               double exchange_cpu_one_shard) {
  // Not below zero: a cluster step cannot cost less than its parts.
  return OtherCosts{std::max(0.0, measured_step_wall - compute - exchange_wall_one_shard),
                    std::max(0.0, measured_step_cpu - compute - exchange_cpu_one_shard)};
}

Prediction PredictThroughput(const StepCosts& costs, const ClusterShape& shape) {
  const bool across_hosts = shape.link_bytes_per_second > 0;
  double step_wall = costs.compute + costs.exchange_wall + costs.other_wall;
  if (across_hosts) {
    // The push and the pull each cross the worker's link once.
    step_wall += 2 * shape.model_bytes / shape.link_bytes_per_second;
  }
  const double step_cpu = costs.compute + costs.exchange_cpu + costs.other_cpu;
  Prediction best{shape.workers / step_wall, "workers"};
  auto bound = [&best](double steps_per_second, const char* limit) {
    if (steps_per_second < best.examples_per_second) best = {steps_per_second, limit};
  };
  if (!across_hosts) {
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
