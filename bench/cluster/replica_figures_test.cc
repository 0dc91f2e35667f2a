#include "bench/cluster/replica_figures.h"

#include <string>
#include <vector>

#include "bench/report/markdown_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A 10 s window of two workers computing `examples_per_second` between
// them; with replicas, `waits` acknowledgements held `wait_seconds` in all.
ReplicaCostRun CostRun(bool shared_memory, bool replicated, double examples_per_second,
                       double waits = 0, double wait_seconds = 0) {
  ReplicaCostRun run;
  run.shared_memory = shared_memory;
  run.replicated = replicated;
  run.window.seconds = 10;
  run.window.cpu_seconds = 20;
  run.window.replication_waits = waits;
  run.window.replication_wait_seconds = wait_seconds;
  for (int i = 0; i < 2; ++i) {
    WorkerWindow worker;
    worker.task = "worker/" + std::to_string(i);
    worker.examples = examples_per_second * 10 / 2;
    worker.steps = worker.examples / 128;
    worker.pushes = worker.steps;
    worker.push_seconds = worker.pushes * (replicated ? 0.004 : 0.002);
    run.window.workers.push_back(worker);
  }
  return run;
}

FailoverKill Kill(int64_t step, double seconds) {
  FailoverKill kill;
  kill.job_id = "job-" + std::to_string(step);
  kill.killed = "ps/0";
  kill.step_at_kill = step;
  kill.seconds_to_training = seconds;
  kill.failovers = 1;
  return kill;
}

ReplicaResults Measured() {
  ReplicaResults results;
  // The backup costs 20% on shared memory and 10% on gRPC bytes.
  results.cost_runs = {CostRun(true, false, 10000), CostRun(true, true, 8000, 4000, 6.0),
                       CostRun(false, false, 6000), CostRun(false, true, 5400, 3000, 7.5)};
  for (double seconds : {5.0, 4.5, 6.5, 4.8, 5.2, 9.0, 4.9, 5.1, 5.0, 4.7}) {
    results.kills.push_back(Kill(210 + static_cast<int64_t>(results.kills.size()), seconds));
  }
  return results;
}

std::string Section(const ReplicaResults& results) {
  MarkdownReport report("cluster");
  AddReplicaSection(results, report);
  return report.Render();
}

TEST(ReplicaFiguresTest, ReadsEachReplicatedRunAgainstTheUnreplicatedOneOnItsTransport) {
  const ReplicaResults results = Measured();
  EXPECT_DOUBLE_EQ(ReplicatedRatio(results, /*shared_memory=*/true), 0.8);
  EXPECT_DOUBLE_EQ(ReplicatedRatio(results, /*shared_memory=*/false), 0.9);
  EXPECT_DOUBLE_EQ(MeanReplicationWaitMs(results.cost_runs[1].window), 1.5);
  EXPECT_DOUBLE_EQ(MeanReplicationWaitMs(results.cost_runs[3].window), 2.5);
  EXPECT_DOUBLE_EQ(MeanReplicationWaitMs(results.cost_runs[0].window), 0);
  ReplicaResults without_reference = results;
  without_reference.cost_runs.erase(without_reference.cost_runs.begin());
  EXPECT_DOUBLE_EQ(ReplicatedRatio(without_reference, true), 0);
}

TEST(ReplicaFiguresTest, MedianAndWorstOfTheKills) {
  const ReplicaResults results = Measured();
  // Sorted: 4.5 4.7 4.8 4.9 5.0 5.0 5.1 5.2 6.5 9.0.
  EXPECT_DOUBLE_EQ(MedianSecondsToTraining(results.kills), 5.0);
  EXPECT_DOUBLE_EQ(WorstSecondsToTraining(results.kills), 9.0);
  std::vector<FailoverKill> odd = {Kill(1, 3), Kill(2, 1), Kill(3, 2)};
  EXPECT_DOUBLE_EQ(MedianSecondsToTraining(odd), 2);
  EXPECT_DOUBLE_EQ(MedianSecondsToTraining({}), 0);
  EXPECT_DOUBLE_EQ(WorstSecondsToTraining({}), 0);
}

TEST(ReplicaFiguresTest, AKillWithoutExactlyOneFailoverOrWithARollbackFails) {
  std::vector<FailoverKill> kills = Measured().kills;
  EXPECT_TRUE(CheckEveryKillFailedOverOnce(kills).ok());
  kills[3].rollbacks = 1;
  kills[3].last_rollback = "shard 0 lost both replicas";
  const absl::Status rolled_back = CheckEveryKillFailedOverOnce(kills);
  EXPECT_EQ(rolled_back.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(rolled_back.message()), HasSubstr("kill 4 (ps/0 of job job-213)"));
  EXPECT_THAT(std::string(rolled_back.message()), HasSubstr("shard 0 lost both replicas"));
  kills[3].rollbacks = 0;
  kills[5].failovers = 2;
  EXPECT_THAT(std::string(CheckEveryKillFailedOverOnce(kills).message()),
              HasSubstr("kill 6 (ps/0 of job job-215): 2 failovers"));
  kills[5].failovers = 0;
  EXPECT_FALSE(CheckEveryKillFailedOverOnce(kills).ok());
}

TEST(ReplicaFiguresTest, SectionShowsTheCostBesideItsReferenceAndEveryKill) {
  const std::string section = Section(Measured());
  EXPECT_THAT(section, HasSubstr("Hot-standby shards: the cost of a backup"));
  EXPECT_THAT(section, HasSubstr("| shared memory | none | 10000 | 1.00 | 2.0 |  |  | 0.200 |"));
  EXPECT_THAT(section, HasSubstr("| shared memory | --ps_replicas=1 (ps/0 primary, ps/1 backup) | "
                                 "8000 | 0.80 | 4.0 | 1.50 | 400 | 0.250 |"));
  EXPECT_THAT(section, HasSubstr("| gRPC bytes (--shm=false) | --ps_replicas=1 (ps/0 primary, "
                                 "ps/1 backup) | 5400 | 0.90 | 4.0 | 2.50 | 300 |"));
  EXPECT_THAT(section, HasSubstr("kept 0.80x of its examples/s on shared memory and 0.90x on "
                                 "gRPC bytes"));
  EXPECT_THAT(section, HasSubstr("10 kills, 1 shard with a backup"));
  EXPECT_THAT(section, HasSubstr("`--heartbeat_interval_secs=0.5 --heartbeat_timeout_secs=4`"));
  EXPECT_THAT(section, HasSubstr("heartbeat timeout passes with the process dead"));
  EXPECT_THAT(section, HasSubstr("| 6 | job-215 | ps/0 | 215 | 9.00 | 1 | 0 |"));
  EXPECT_THAT(section, HasSubstr("median 5.00 s, worst 9.00 s over 10 kills"));
}

TEST(ReplicaFiguresTest, NoSectionWithoutTheFourCostRuns) {
  ReplicaResults results = Measured();
  results.cost_runs.pop_back();
  EXPECT_THAT(Section(results), Not(HasSubstr("Hot-standby")));
  results = Measured();
  results.kills.clear();
  const std::string section = Section(results);
  EXPECT_THAT(section, HasSubstr("Hot-standby shards"));
  EXPECT_THAT(section, Not(HasSubstr("Failover")));
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
