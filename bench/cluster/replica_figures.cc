#include "bench/cluster/replica_figures.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "bench/cluster/throughput_figures.h"
#include "bench/report/markdown_table.h"

namespace pstrain {
namespace bench {
namespace {

// Without and with replicas, on each of the two transports.
constexpr size_t kCostRuns = 4;

std::string TransportLabel(bool shared_memory) {
  return shared_memory ? "shared memory" : "gRPC bytes (--shm=false)";
}

const ReplicaCostRun* FindRun(const ReplicaResults& results, bool shared_memory, bool replicated) {
  for (const ReplicaCostRun& run : results.cost_runs) {
    if (run.shared_memory == shared_memory && run.replicated == replicated) return &run;
  }
  return nullptr;
}

std::vector<double> SortedSeconds(const std::vector<FailoverKill>& kills) {
  std::vector<double> seconds;
  for (const FailoverKill& kill : kills) seconds.push_back(kill.seconds_to_training);
  std::sort(seconds.begin(), seconds.end());
  return seconds;
}

MarkdownTable CostTable(const ReplicaResults& results) {
  MarkdownTable table({"transport", "replicas", "examples/s",
                       "ratio to no replicas, same transport", "worker push latency ms",
                       "primary's replication wait, mean ms",
                       "acknowledgements held for the backup per s", "CPU s per 1,000 examples"});
  for (const ReplicaCostRun& run : results.cost_runs) {
    const ThroughputWindow& window = run.window;
    table.AddRow(
        {TransportLabel(run.shared_memory),
         run.replicated ? "--ps_replicas=1 (ps/0 primary, ps/1 backup)" : "none",
         Fixed(window.ExamplesPerSecond(), 0),
         run.replicated ? Fixed(ReplicatedRatio(results, run.shared_memory), 2) : "1.00",
         MeanPushLatencyText(window), run.replicated ? Fixed(MeanReplicationWaitMs(window), 2) : "",
         run.replicated && window.seconds > 0 ? Fixed(window.replication_waits / window.seconds, 0)
                                              : "",
         Fixed(window.CpuSecondsPerThousandExamples(), 3)});
  }
  return table;
}

std::string CostReading(const ReplicaResults& results) {
  const ReplicaCostRun* shm = FindRun(results, true, true);
  const ReplicaCostRun* grpc = FindRun(results, false, true);
  return absl::StrCat(
      "With a backup the job kept ", Fixed(ReplicatedRatio(results, true), 2),
      "x of its examples/s on shared memory and ", Fixed(ReplicatedRatio(results, false), 2),
      "x on gRPC bytes. Every push the primary applies is forwarded to the backup (over gRPC, "
      "whatever the workers' transport) and its answer waits until the backup has applied it: "
      "the primary's acknowledgements waited ",
      Fixed(MeanReplicationWaitMs(shm->window), 2),
      " ms on average for the backup on shared "
      "memory and ",
      Fixed(MeanReplicationWaitMs(grpc->window), 2),
      " ms on gRPC bytes, time that lengthens each push (the workers' push latency) and, with "
      "the backup's own applying on the same cores, takes CPU from the workers.");
}

MarkdownTable KillsTable(const std::vector<FailoverKill>& kills) {
  MarkdownTable table({"kill", "job", "killed primary", "global step at the kill",
                       absl::StrCat("s from SIGKILL to global step +", kFailoverStepsPastKill),
                       "failovers", "rollbacks"});
  for (size_t i = 0; i < kills.size(); ++i) {
    const FailoverKill& kill = kills[i];
    table.AddRow({absl::StrCat(i + 1), kill.job_id, kill.killed, absl::StrCat(kill.step_at_kill),
                  Fixed(kill.seconds_to_training, 2), absl::StrCat(kill.failovers),
                  absl::StrCat(kill.rollbacks)});
  }
  return table;
}

void FailoverSection(const ReplicaResults& results, MarkdownReport& report) {
  const std::vector<FailoverKill>& kills = results.kills;
  report.SubHeading(absl::StrCat("Failover: a primary killed with SIGKILL, ", kills.size(),
                                 " kills, 1 shard with a backup, 2 workers"));
  report.Paragraph(absl::StrCat(
      "A cluster with `--ps_replicas=1` (ps/0 the shard's primary, ps/1 its backup) and the "
      "coordinator's heartbeat settings shortened to `--heartbeat_interval_secs=",
      Fixed(results.heartbeat_interval_secs, 1),
      " --heartbeat_timeout_secs=", Fixed(results.heartbeat_timeout_secs, 0),
      "`. Each kill has a job of its own, so that every one meets a shard with its backup: the "
      "async MLP job above is submitted, and once its global step (JobService GetJob, polled) "
      "has passed ",
      results.kill_after_step,
      " the primary (the parameter server whose `pstrain_ps_replica_role` says primary) gets "
      "SIGKILL; the figure is the time from the kill until the job's global step is ",
      kFailoverStepsPastKill,
      " past its value at the kill, i.e. training again on the promoted backup. Then the job is "
      "stopped, and the killed process is started again at its address for the next job. The "
      "coordinator finds a primary lost when its heartbeat timeout passes with the process "
      "dead and its pod not restarted, which is what this figure includes: the killed primary "
      "is restarted only after the measurement. A process restarted at the same address is "
      "noticed sooner, when it registers again. Each job's status must show 1 failover and 0 "
      "rollbacks, or the part fails."));
  report.Table(KillsTable(kills));
  report.Paragraph(
      absl::StrCat("Kill to training again: median ", Fixed(MedianSecondsToTraining(kills), 2),
                   " s, worst ", Fixed(WorstSecondsToTraining(kills), 2), " s over ", kills.size(),
                   " kills, with a heartbeat timeout of ", Fixed(results.heartbeat_timeout_secs, 0),
                   " s; every job failed over once with no rollback, so no step was lost."));
}

}  // namespace

double ReplicatedRatio(const ReplicaResults& results, bool shared_memory) {
  const ReplicaCostRun* plain = FindRun(results, shared_memory, false);
  const ReplicaCostRun* replicated = FindRun(results, shared_memory, true);
  if (plain == nullptr || replicated == nullptr) return 0;
  const double reference = plain->window.ExamplesPerSecond();
  return reference > 0 ? replicated->window.ExamplesPerSecond() / reference : 0;
}

double MeanReplicationWaitMs(const ThroughputWindow& window) {
  return window.replication_waits > 0
             ? window.replication_wait_seconds / window.replication_waits * 1e3
             : 0;
}

double MedianSecondsToTraining(const std::vector<FailoverKill>& kills) {
  const std::vector<double> seconds = SortedSeconds(kills);
  if (seconds.empty()) return 0;
  const size_t middle = seconds.size() / 2;
  return seconds.size() % 2 == 1 ? seconds[middle] : (seconds[middle - 1] + seconds[middle]) / 2;
}

double WorstSecondsToTraining(const std::vector<FailoverKill>& kills) {
  const std::vector<double> seconds = SortedSeconds(kills);
  return seconds.empty() ? 0 : seconds.back();
}

absl::Status CheckEveryKillFailedOverOnce(const std::vector<FailoverKill>& kills) {
  for (size_t i = 0; i < kills.size(); ++i) {
    const FailoverKill& kill = kills[i];
    if (kill.failovers != 1 || kill.rollbacks != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "kill ", i + 1, " (", kill.killed, " of job ", kill.job_id, "): ", kill.failovers,
          " failovers (last: ", kill.last_failover, ") and ", kill.rollbacks,
          " rollbacks (last: ", kill.last_rollback, "); expected 1 failover and no rollback"));
    }
  }
  return absl::OkStatus();
}

void AddReplicaSection(const ReplicaResults& results, MarkdownReport& report) {
  if (results.cost_runs.size() != kCostRuns || FindRun(results, true, true) == nullptr ||
      FindRun(results, false, true) == nullptr) {
    return;
  }
  report.SubHeading("Hot-standby shards: the cost of a backup, Fashion-MNIST MLP, async");
  report.Paragraph(
      "The e2e part's async job (MLP 784-256-128-10, batch 128) on 1 shard and 2 workers, four "
      "times, each on a cluster of its own: without replicas and with `--ps_replicas=1` (the "
      "shard's backup on a process of its own), on shared-memory lanes (as `pstrain local` "
      "runs) and with tensor bytes in the gRPC messages (`--shm=false` on workers and "
      "parameter servers, as between hosts). Examples/s over the same warm-up and window as "
      "the e2e part; each replicated run is read against the unreplicated run on the same "
      "transport. The replication wait is the primary's "
      "`pstrain_ps_replication_wait_seconds` (how long an acknowledgement waited for the "
      "backup), its sum over its count in the window.");
  report.Table(CostTable(results));
  report.Paragraph(CostReading(results));
  if (!results.kills.empty()) FailoverSection(results, report);
}

}  // namespace bench
}  // namespace pstrain
