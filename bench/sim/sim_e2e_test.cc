// The simulator against a real pstrain-coordinator and pstrain-ps: 50 light
// workers register, heartbeat, take and complete leases, report progress
// and push and pull on the shard, and closed-loop pushers load the shard;
// every call must be answered.

#include <cstdlib>
#include <string>

#include "bench/sim/sim_phases.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

SimPlace Place() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return SimPlace{"", tmp != nullptr ? tmp : "/tmp"};
}

TEST(SimEndToEndTest, FiftyLightWorkersAreAnsweredByARealCoordinatorAndShard) {
  CoordinatorPhaseOptions options;
  options.heartbeat_interval = absl::Seconds(1);
  options.step_interval = absl::Milliseconds(500);
  options.records_per_lease = 128;  // two steps of 64
  options.worker.batch_size = 64;
  options.worker.steps_per_report = 2;
  options.worker.push_dense = true;
  options.worker.push_sparse = true;
  options.worker.rows = 8;
  options.job.dense_floats = 4096;
  options.channels = 4;
  options.settle_timeout = absl::Seconds(45);
  options.warmup = absl::Seconds(1);
  options.window = absl::Seconds(6);
  absl::StatusOr<CoordinatorPoint> point = MeasureCoordinator(50, options, Place());
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_EQ(point->broke, "");
  EXPECT_EQ(point->registered, 50);
  EXPECT_EQ(point->assigned, 50);
  // Six one-second beats each, give or take the window's edges.
  EXPECT_GE(point->call(SimCall::kHeartbeat).answered, 250);
  for (SimCall kind : {SimCall::kHeartbeat, SimCall::kAcquireLease, SimCall::kCompleteLease,
                       SimCall::kProgress, SimCall::kPull, SimCall::kPush}) {
    const CallFigures& figures = point->call(kind);
    EXPECT_GT(figures.answered, 0) << SimCallName(kind);
    EXPECT_EQ(figures.failed(), 0) << SimCallName(kind) << ": "
                                   << (figures.errors.empty() ? "" : figures.errors.begin()->first);
  }
  EXPECT_GT(point->cpu_seconds, 0);
  EXPECT_GT(point->resident_bytes, 0);
}

TEST(SimEndToEndTest, ARealShardAppliesEveryPushOfConcurrentPushers) {
  ShardPhaseOptions options;
  options.job.dense_floats = 16384;
  options.rows = 32;
  options.pushers = {1, 4};
  options.channels = 2;
  options.warmup = absl::Milliseconds(500);
  options.window = absl::Seconds(1);
  absl::StatusOr<std::vector<ShardPoint>> points = MeasureShard(options, Place());
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 4u);  // dense and sparse, 1 and 4 pushers
  for (const ShardPoint& point : *points) {
    EXPECT_EQ(point.broke, "") << point.kind << " " << point.pushers;
    EXPECT_GT(point.applied, 0) << point.kind << " " << point.pushers;
    EXPECT_EQ(point.not_applied, 0)
        << point.kind << " " << point.pushers << ": " << point.not_applied_detail;
    EXPECT_GT(point.push_bytes, 0);
  }
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
