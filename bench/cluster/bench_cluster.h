#ifndef PSTRAIN_BENCH_CLUSTER_BENCH_CLUSTER_H_
#define PSTRAIN_BENCH_CLUSTER_BENCH_CLUSTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/common/metrics_page.h"
#include "client/local_cluster.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace bench {

// The step phases the workers time (pstrain_worker_step_phase_seconds).
inline const std::vector<std::string>& StepPhases() {
  static const auto* phases =
      new std::vector<std::string>{"data_wait", "pull", "compute", "push_wait"};
  return *phases;
}

// What one worker did in a measured window: counter differences between a
// scrape of its /metrics before and one after.
struct WorkerWindow {
  std::string task;  // "worker/0"
  double steps = 0;
  double examples = 0;
  std::map<std::string, double> phase_seconds;  // by StepPhases() name
  // pstrain_worker_push_latency_seconds: a push to every shard, whether
  // the step waited for it (sync) or overlapped it with the next pull.
  double pushes = 0;
  double push_seconds = 0;
  // Batches whose push a parameter server refused as late (a sync round
  // closed without it, as a backup worker's does): computed, not applied.
  double stale_pushes = 0;
};

// A measured window of a running job.
struct ThroughputWindow {
  double seconds = 0;  // wall time between the two scrapes
  std::vector<WorkerWindow> workers;
  // The coordinator's global step at both ends (applied updates, sync
  // rounds); it moves by the workers' progress reports, every
  // steps_per_loop steps.
  int64_t global_steps = 0;
  // The updates the parameter servers applied in the window (sync rounds):
  // the change of the highest shard version (pstrain_ps_version), which the
  // global step is taken from, read at both ends without waiting for a
  // report.
  int64_t shard_updates = 0;
  // CPU time of every process of the cluster (coordinator, parameter
  // servers, workers, evaluator: process_cpu_seconds_total) in the window.
  double cpu_seconds = 0;
  // With replicas: the acknowledgements the parameter servers held until
  // the backup had the entry, and how long they waited in all
  // (pstrain_ps_replication_wait_seconds; only primaries wait).
  double replication_waits = 0;
  double replication_wait_seconds = 0;

  double ExamplesPerSecond() const;
  // Cluster CPU seconds per 1,000 examples the workers computed.
  double CpuSecondsPerThousandExamples() const;
};

// One evaluation seen while following a job.
struct EvaluationPoint {
  int64_t step = 0;
  double accuracy = 0;
  double seconds = 0;  // since submit
};

// How a job run to a target accuracy went.
struct TargetRun {
  std::vector<EvaluationPoint> evaluations;  // in arrival order, skipped ones left out
  double seconds = 0;                        // from submit to the evaluation at the target
  int64_t step = 0;                          // of the checkpoint that reached it
  double accuracy = 0;                       // its test accuracy
  bool reached = false;
  JobStatus final_status;
};

// The processes of a BenchCluster besides the coordinator and the
// evaluator.
struct BenchClusterLayout {
  int num_ps = 1;  // shards
  // LocalClusterOptions::ps_replicas: 1 adds a backup process per shard.
  int ps_replicas = 0;
  int num_workers = 2;
  // LocalClusterOptions::shared_memory: false moves tensor bytes in the
  // gRPC messages (--shm=false), as between hosts.
  bool shared_memory = true;
};

// A local cluster (coordinator, parameter servers, workers, evaluator as
// real processes on loopback) and the JobService calls a benchmark makes.
// Every wait has a deadline. Not thread-safe.
class BenchCluster {
 public:
  // Starts the processes with logs under `run_dir` and checkpoints under
  // `checkpoint_root`; binaries from `bin_dir` or this program's runfiles;
  // `coordinator_flags` and `worker_flags` ("--name=value") passed to the
  // coordinator and to every worker.
  // `hosts`, when not empty, places every task on a host of its own
  // (LocalClusterOptions::hosts).
  static absl::StatusOr<std::unique_ptr<BenchCluster>> Start(
      const BenchClusterLayout& layout, const std::string& run_dir, const std::string& checkpoint_root,
      const std::string& bin_dir, const std::vector<std::string>& coordinator_flags,
      const std::vector<std::string>& worker_flags,
      const std::map<std::string, TaskHost>& hosts = {});
  ~BenchCluster();

  int num_workers() const;

  // Submits the text-format spec; the job id.
  absl::StatusOr<std::string> Submit(const std::string& spec_text);

  // Waits until every worker has computed a step of the job just submitted
  // (`before` is a scrape taken before submitting), then `warmup` more, then
  // measures `window`, stretched until every worker has computed
  // `min_steps` in it or `max_window` has passed. `on_trained`, when set,
  // runs once every worker has computed a step, before the warm-up (a
  // disturbance that the window should see in its steady state); its error
  // ends the measurement. FailedPrecondition: a worker computed nothing
  // within `start_timeout`, or the job ended.
  absl::StatusOr<ThroughputWindow> Measure(
      const std::string& job_id, const std::vector<MetricsPage>& before,
      absl::Duration start_timeout, absl::Duration warmup, absl::Duration window, int min_steps,
      absl::Duration max_window, const std::function<absl::Status()>& on_trained = nullptr);

  // Stops the job without a final checkpoint and waits up to `timeout` for
  // it to end.
  absl::Status StopAndWait(const std::string& job_id, absl::Duration timeout);

  // Submits the spec and follows the job's events until an evaluation
  // reaches `target_accuracy` (then lets the job end by its own stop
  // condition, waiting up to `timeout` in all), or until `timeout`.
  absl::StatusOr<TargetRun> RunToTarget(const std::string& spec_text, double target_accuracy,
                                        absl::Duration timeout);

  // The job's status (JobService.GetJob).
  absl::StatusOr<JobStatus> Get(const std::string& job_id);

  // Polls the job until its global step is at least `step`; its status
  // then. FailedPrecondition: the job ended first. DeadlineExceeded: not
  // within `timeout`.
  absl::StatusOr<JobStatus> AwaitGlobalStep(const std::string& job_id, int64_t step,
                                            absl::Duration timeout);

  // The process id of task `name` ("worker/1"). NotFound: no such task.
  absl::StatusOr<int> Pid(const std::string& name) const;

  // SIGKILL to task `name` (a crash), waiting until it has ended.
  absl::Status Kill(const std::string& name);
  // Starts the ended task `name` again on its addresses and waits until it
  // serves (LocalCluster::RestartTask).
  absl::Status Restart(const std::string& name);

  // Every worker's /metrics, in task order.
  absl::StatusOr<std::vector<MetricsPage>> ScrapeWorkers();
  // Every parameter server's /metrics, in task order.
  absl::StatusOr<std::vector<MetricsPage>> ScrapeParameterServers();
  // The names of the parameter-server tasks, in the same order.
  std::vector<std::string> ParameterServerNames() const;

  // SIGTERM to every process; OK when all exited cleanly.
  absl::Status Stop();

 private:
  BenchCluster() = default;
  std::vector<const LocalTask*> TasksOf(const std::string& role) const;
  absl::StatusOr<std::vector<MetricsPage>> Scrape(const std::vector<const LocalTask*>& tasks);
  // The CPU seconds every process of the cluster has used so far.
  absl::StatusOr<double> CpuSeconds();
  // Waits until every worker has computed a step more than in `before`.
  absl::Status WaitForEveryWorker(const std::string& job_id,
                                  const std::vector<MetricsPage>& before,
                                  absl::Duration start_timeout);

  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<JobService::Stub> jobs_;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_BENCH_CLUSTER_H_
