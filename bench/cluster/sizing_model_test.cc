#include "bench/cluster/sizing_model.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

StepCosts Costs() {
  // Milliseconds as seconds: compute 1, exchange 0.5 wall / 0.5 CPU,
  // other 0.5 wall / 1.0 CPU.
  return StepCosts{1e-3, 0.5e-3, 0.5e-3, 0.5e-3, 1e-3};
}

TEST(SizingModelTest, CalibrationTakesWhatTheRunShowsBeyondItsParts) {
  // One run alone: its other costs as they are, nothing for contention.
  const OtherCosts one = CalibrateOtherCosts({2e-3, 2.5e-3, 4}, {}, 2, 1e-3, 0.5e-3, 0.5e-3);
  EXPECT_DOUBLE_EQ(one.wall, 0.5e-3);
  EXPECT_DOUBLE_EQ(one.cpu, 1e-3);
  EXPECT_EQ(one.contention_cpu, 0);
  // A run faster than its parts measured apart leaves nothing, not less.
  EXPECT_EQ(CalibrateOtherCosts({1e-3, 1e-3, 4}, {}, 2, 1e-3, 0.5e-3, 0.5e-3).wall, 0);
}

TEST(SizingModelTest, ASecondRunGivesWhatSharedCoresCost) {
  // 4 processes on 2 cores: half the wakeups find their core taken; 5:
  // 60%. The other CPU rises from 1 ms to 1.2 ms: 2 ms with every wakeup
  // contended, 0 ms without.
  const OtherCosts costs =
      CalibrateOtherCosts({2e-3, 2.5e-3, 4}, {2e-3, 2.7e-3, 5}, 2, 1e-3, 0.5e-3, 0.5e-3);
  EXPECT_NEAR(costs.contention_cpu, 2e-3, 1e-12);
  EXPECT_NEAR(costs.cpu, 1e-3, 1e-12);
  EXPECT_DOUBLE_EQ(costs.share, 0.5);
  EXPECT_DOUBLE_EQ(ContentionShare(4, 2), 0.5);
  EXPECT_DOUBLE_EQ(ContentionShare(2, 2), 0);
  EXPECT_DOUBLE_EQ(ContentionShare(1, 8), 0);
}

TEST(SizingModelTest, ContentionCostsCpuOnOneHostOnly) {
  StepCosts costs = Costs();  // other CPU 1 ms, measured at a share of 0.5
  costs.contention_cpu = 2e-3;
  costs.other_share = 0.5;
  ClusterShape shape;
  shape.host_cores = 2;
  shape.batch = 100;
  shape.workers = 4;
  shape.shards = 2;  // 8 processes with the coordinator and the evaluator
  // CPU a step: 2.5 ms + 2 ms x (0.75 - 0.5).
  Prediction p = PredictThroughput(costs, shape);
  EXPECT_EQ(p.limit, "cores");
  EXPECT_DOUBLE_EQ(p.examples_per_second, 100 * 2 / 3e-3);
  // Across hosts each process has its host's cores: no contention, and
  // the workers' own steps bound it.
  shape.link_bytes_per_second = 1e12;
  shape.model_bytes = 1;
  EXPECT_EQ(PredictThroughput(costs, shape).limit, "workers");
}

TEST(SizingModelTest, OnOneHostWorkersAddUntilTheCoresAreBusy) {
  ClusterShape shape;
  shape.host_cores = 2;
  shape.batch = 100;
  shape.workers = 1;
  // 1 worker: a step every 2 ms.
  Prediction one = PredictThroughput(Costs(), shape);
  EXPECT_DOUBLE_EQ(one.examples_per_second, 100 / 2e-3);
  EXPECT_EQ(one.limit, "workers");
  // 4 workers would make 2,000 steps/s, but each costs 2.5 ms of CPU and
  // 2 cores give 800 steps/s.
  shape.workers = 4;
  Prediction four = PredictThroughput(Costs(), shape);
  EXPECT_DOUBLE_EQ(four.examples_per_second, 100 * 2 / 2.5e-3);
  EXPECT_EQ(four.limit, "cores");
}

TEST(SizingModelTest, AcrossHostsTheLinkLengthensEachStepAndBoundsTheShards) {
  ClusterShape shape;
  shape.batch = 100;
  shape.workers = 8;
  shape.shards = 1;
  shape.model_bytes = 1e6;
  shape.link_bytes_per_second = 1e9;  // 1 ms per MB each way
  // Each step: 2 ms of its own, 2 ms on the link: 8 workers, 2,000 steps/s;
  // one shard's link: 1,000 steps/s.
  Prediction one_shard = PredictThroughput(Costs(), shape);
  EXPECT_DOUBLE_EQ(one_shard.examples_per_second, 100 * 1e9 / 1e6);
  EXPECT_EQ(one_shard.limit, "shard links");
  shape.shards = 4;
  Prediction four_shards = PredictThroughput(Costs(), shape);
  EXPECT_DOUBLE_EQ(four_shards.examples_per_second, 100 * 8 / 4e-3);
  EXPECT_EQ(four_shards.limit, "workers");
}

TEST(SizingModelTest, ShardCoresBoundWhenTheExchangeIsCostly) {
  StepCosts costs = Costs();
  costs.exchange_cpu = 40e-3;  // 20 ms of it on the shard side
  ClusterShape shape;
  shape.batch = 1;
  shape.workers = 64;
  shape.shards = 2;
  shape.host_cores = 4;
  shape.model_bytes = 1;
  shape.link_bytes_per_second = 1e12;
  // Each shard: 10 ms per worker step on 4 cores: 400 steps/s each, the
  // pair 400 (each step needs both).
  Prediction p = PredictThroughput(costs, shape);
  EXPECT_EQ(p.limit, "shard cores");
  EXPECT_DOUBLE_EQ(p.examples_per_second, 4 / 10e-3);
}

TEST(SizingModelTest, ShardsNeededAreTheFewestWhoseLinksKeepUp) {
  ClusterShape shape;
  shape.batch = 100;
  shape.workers = 8;
  shape.model_bytes = 1e6;
  shape.link_bytes_per_second = 1e9;
  // 8 workers at 4 ms a step: 2,000 steps/s; each shard's link 1,000.
  EXPECT_EQ(ShardsNeeded(Costs(), shape), 2);
  shape.workers = 16;
  EXPECT_EQ(ShardsNeeded(Costs(), shape), 4);
  EXPECT_EQ(ShardsNeeded(Costs(), shape, /*max_shards=*/3), -1);
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
