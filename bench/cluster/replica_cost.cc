#include "bench/cluster/replica_cost.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/cluster/bench_job.h"
#include "bench/cluster/throughput_measurement.h"

namespace pstrain {
namespace bench {
namespace {

// At least ten kills, as the median and the worst are read on them.
constexpr int kKills = 10;
constexpr absl::Duration kTrainTimeout = absl::Seconds(120);
constexpr absl::Duration kFailoverTimeout = absl::Seconds(60);
constexpr absl::Duration kStopTimeout = absl::Seconds(60);
// pstrain_ps_replica_role of a shard's primary.
constexpr double kPrimaryRole = 1;

// The async run of the e2e part on a new cluster of 1 shard (with a backup
// when `replicated`) and 2 workers.
absl::StatusOr<ReplicaCostRun> MeasureCost(ClusterBenchSettings& settings, bool shared_memory,
                                           bool replicated) {
  BenchClusterLayout layout;
  layout.ps_replicas = replicated ? 1 : 0;
  layout.shared_memory = shared_memory;
  absl::StatusOr<std::unique_ptr<BenchCluster>> cluster = StartCluster(settings, layout);
  if (!cluster.ok()) return cluster.status();
  absl::StatusOr<ThroughputWindow> window =
      MeasureCluster(settings, **cluster, FashionMlp(), /*sync=*/false, settings.window);
  if (!window.ok()) return window.status();
  if (absl::Status stopped = (*cluster)->Stop(); !stopped.ok()) return stopped;
  ReplicaCostRun run;
  run.shared_memory = shared_memory;
  run.replicated = replicated;
  run.window = *std::move(window);
  if (replicated) {
    Progress(
        absl::StrFormat("  replicas: the primary's acknowledgements waited %.2f ms on "
                        "average for the backup",
                        MeanReplicationWaitMs(run.window)));
  }
  return run;
}

// The async MLP job of the e2e part, run until stopped.
std::string AsyncSpec(ClusterBenchSettings& settings) {
  BenchJob job;
  job.name = "bench-async-failover";
  job.data_dir = settings.data_dir;
  job.model_dir = settings.NewModelDir(job.name);
  job.hidden_units = FashionMlp();
  return BenchJobSpecText(job);
}

// The parameter server whose replica role says primary.
// FailedPrecondition: none or more than one does.
absl::StatusOr<std::string> FindPrimary(BenchCluster& cluster) {
  absl::StatusOr<std::vector<MetricsPage>> pages = cluster.ScrapeParameterServers();
  if (!pages.ok()) return pages.status();
  const std::vector<std::string> names = cluster.ParameterServerNames();
  std::vector<std::string> primaries;
  for (size_t i = 0; i < pages->size(); ++i) {
    if ((*pages)[i].Sum("pstrain_ps_replica_role") == kPrimaryRole) primaries.push_back(names[i]);
  }
  if (primaries.size() != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        primaries.size(), " parameter servers say they are the shard's primary; expected one"));
  }
  return primaries.front();
}

// One job: trained past results.kill_after_step, its primary killed, timed
// to training again, stopped; then the killed process is started again.
absl::StatusOr<FailoverKill> KillOnePrimary(ClusterBenchSettings& settings, BenchCluster& cluster,
                                            const ReplicaResults& results) {
  FailoverKill kill;
  absl::StatusOr<std::string> job_id = cluster.Submit(AsyncSpec(settings));
  if (!job_id.ok()) return job_id.status();
  kill.job_id = *job_id;
  absl::StatusOr<JobStatus> trained =
      cluster.AwaitGlobalStep(*job_id, results.kill_after_step + 1, kTrainTimeout);
  if (!trained.ok()) return trained.status();
  absl::StatusOr<std::string> primary = FindPrimary(cluster);
  if (!primary.ok()) return primary.status();
  kill.killed = *primary;
  absl::StatusOr<JobStatus> at_kill = cluster.Get(*job_id);
  if (!at_kill.ok()) return at_kill.status();
  kill.step_at_kill = at_kill->global_step();
  const absl::Time killed = absl::Now();
  if (absl::Status ended = cluster.Kill(kill.killed); !ended.ok()) return ended;
  absl::StatusOr<JobStatus> again = cluster.AwaitGlobalStep(
      *job_id, kill.step_at_kill + kFailoverStepsPastKill, kFailoverTimeout);
  if (!again.ok()) return again.status();
  kill.seconds_to_training = absl::ToDoubleSeconds(absl::Now() - killed);
  if (absl::Status stopped = cluster.StopAndWait(*job_id, kStopTimeout); !stopped.ok()) {
    return stopped;
  }
  absl::StatusOr<JobStatus> final_status = cluster.Get(*job_id);
  if (!final_status.ok()) return final_status.status();
  kill.failovers = final_status->failovers();
  kill.rollbacks = final_status->rollbacks();
  kill.last_failover = final_status->last_failover();
  kill.last_rollback = final_status->last_rollback();
  if (absl::Status restarted = cluster.Restart(kill.killed); !restarted.ok()) return restarted;
  Progress(absl::StrFormat(
      "  %s killed at global step %d: training again after %.2f s; "
      "%d failovers, %d rollbacks",
      kill.killed, kill.step_at_kill, kill.seconds_to_training, kill.failovers, kill.rollbacks));
  return kill;
}

absl::Status MeasureFailovers(ClusterBenchSettings& settings, ReplicaResults& results) {
  BenchClusterLayout layout;
  layout.ps_replicas = 1;
  absl::StatusOr<std::unique_ptr<BenchCluster>> cluster =
      StartCluster(settings, layout, {},
                   {absl::StrCat("--heartbeat_interval_secs=", results.heartbeat_interval_secs),
                    absl::StrCat("--heartbeat_timeout_secs=", results.heartbeat_timeout_secs)});
  if (!cluster.ok()) return cluster.status();
  for (int i = 0; i < kKills; ++i) {
    Progress(absl::StrCat("replicas: failover ", i + 1, " of ", kKills));
    absl::StatusOr<FailoverKill> kill = KillOnePrimary(settings, **cluster, results);
    if (!kill.ok()) return kill.status();
    results.kills.push_back(*std::move(kill));
    if (absl::Status once = CheckEveryKillFailedOverOnce(results.kills); !once.ok()) return once;
  }
  return (*cluster)->Stop();
}

}  // namespace

absl::StatusOr<ReplicaResults> RunReplicas(ClusterBenchSettings& settings) {
  ReplicaResults results;
  for (bool shared_memory : {true, false}) {
    for (bool replicated : {false, true}) {
      Progress(absl::StrCat("replicas: async, ", shared_memory ? "shared memory" : "gRPC bytes",
                            replicated ? ", with a backup" : ", no replicas"));
      absl::StatusOr<ReplicaCostRun> run = MeasureCost(settings, shared_memory, replicated);
      if (!run.ok()) return run.status();
      results.cost_runs.push_back(*std::move(run));
    }
  }
  if (absl::Status measured = MeasureFailovers(settings, results); !measured.ok()) {
    return measured;
  }
  return results;
}

}  // namespace bench
}  // namespace pstrain
