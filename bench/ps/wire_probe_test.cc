#include "bench/ps/wire_probe.h"

#include <memory>

#include "common/net/callback_queue_hold.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(WireProbeTest, ModelsHoldTheirVariablesBytes) {
  const WireModel mlp = MlpWireModel({256, 128});
  EXPECT_EQ(mlp.label, "MLP 784-256-128-10");
  ASSERT_EQ(mlp.variables.size(), 6u);
  EXPECT_EQ(mlp.variables[0].first, "dense0/kernel");
  EXPECT_EQ(mlp.bytes, (784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10) * 4);
  const WireModel dense = DenseWireModel(1, 2);
  ASSERT_EQ(dense.variables.size(), 2u);
  EXPECT_EQ(dense.bytes, 1 << 20);
}

// Both paths move the model each step (MeasureWire checks every pulled
// value against the steps' updates and dies otherwise).
TEST(WireProbeTest, MeasuresStepsThroughLanesAndOverGrpc) {
  const std::unique_ptr<CallbackQueueHold> hold = CallbackQueueHold::Start();
  const WireModel model = MlpWireModel({16});
  for (bool shm : {true, false}) {
    WireProbeOptions options;
    options.shm = shm;
    options.seconds = 0.2;
    options.min_steps = 5;
    const WireResult r = MeasureWire(model, 2, options);
    EXPECT_GE(r.steps, 5) << (shm ? "lanes" : "grpc");
    EXPECT_EQ(r.bytes_per_step, 2 * model.bytes);
    EXPECT_GT(r.seconds, 0);
    EXPECT_GT(r.cpu_seconds, 0);
  }
}

}  // namespace
}  // namespace pstrain
