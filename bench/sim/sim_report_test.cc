#include "bench/sim/sim_report.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

CoordinatorPoint Point(int members, double cpu_seconds) {
  CoordinatorPoint point;
  point.members = members;
  point.registered = members;
  point.assigned = members;
  point.seconds = 10;
  point.cpu_seconds = cpu_seconds;
  point.resident_bytes = 64 << 20;
  point.simulator_cpu_seconds = 5;
  for (int i = 1; i <= 100; ++i) {
    point.calls[static_cast<int>(SimCall::kHeartbeat)].latency.Add(absl::Microseconds(100 * i));
  }
  point.calls[static_cast<int>(SimCall::kHeartbeat)].answered = 100;
  return point;
}

SimRun TwoPointRun() {
  SimRun run;
  run.command = "bazel-bin/bench/sim/sim_bench --members=100,1000";
  run.heartbeat_interval_secs = 2;
  run.step_interval_secs = 1;
  run.records_per_lease = 640;
  run.steps_per_report = 10;
  run.coordinator = {Point(100, 0.1), Point(1000, 2.0)};
  ShardPoint one;
  one.kind = "dense";
  one.pushers = 1;
  one.seconds = 5;
  one.applied = 1000;
  one.push_bytes = 256 * 1024;
  ShardPoint many = one;
  many.pushers = 8;
  many.applied = 3000;
  run.shard = {one, many};
  return run;
}

std::string Rendered(const SimRun& run) {
  MarkdownReport report(kSimReportTitle);
  AddSimReport(run, &report);
  return report.Render();
}

TEST(SimReportTest, CpuPerMemberIsComparedWithTheFirstCount) {
  const std::string text = Rendered(TwoPointRun());
  // 0.1 s over 10 s and 100 members: 100 µs per member-second; 2 s over
  // 1000 members: 200, twice the base.
  EXPECT_NE(text.find("| 100 | 100 / 100 | 0.010 | 100.0 | 1.00x |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 1000 | 1000 / 1000 | 0.200 | 200.0 | 2.00x |"), std::string::npos) << text;
  // Heartbeat p50 / p99 of 0.1 .. 10 ms.
  EXPECT_NE(text.find("| 5.00 / 9.90 |"), std::string::npos) << text;
  EXPECT_NE(text.find("sim_bench --members=100,1000"), std::string::npos);
}

TEST(SimReportTest, ShardRatesAreComparedWithOnePusherOfTheSameKind) {
  const std::string text = Rendered(TwoPointRun());
  EXPECT_NE(text.find("| dense | 1 | 256.0 | 200 | 1.00x |"), std::string::npos) << text;
  EXPECT_NE(text.find("| dense | 8 | 256.0 | 600 | 3.00x |"), std::string::npos) << text;
}

TEST(SimReportTest, SaysHowMuchOfTheMachineTheSimulatorTook) {
  // 5 s of CPU over a 10 s window: half a core, and its lateness beside.
  EXPECT_NE(Rendered(TwoPointRun()).find("| 0.50 | 0.00 / 0 |"), std::string::npos)
      << Rendered(TwoPointRun());
}

TEST(SimReportTest, StatesNoTargets) {
  EXPECT_EQ(Rendered(TwoPointRun()).find("Target:"), std::string::npos);
}

TEST(SimReportTest, FirstBreakNamesTheSmallestCountThatBroke) {
  SimRun run = TwoPointRun();
  EXPECT_EQ(FirstBreak(run), "Nothing broke up to 1000 members.");
  run.coordinator.push_back(Point(10000, 50));
  run.coordinator[1].broke = "heartbeats timed out";
  run.coordinator[2].broke = "the coordinator ran out of memory";
  EXPECT_EQ(FirstBreak(run), "At 1000 members: heartbeats timed out");
  const std::string text = Rendered(run);
  EXPECT_NE(text.find("What broke first: At 1000 members: heartbeats timed out"),
            std::string::npos);
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
