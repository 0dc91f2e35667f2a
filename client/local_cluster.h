#ifndef PSTRAIN_CLIENT_LOCAL_CLUSTER_H_
#define PSTRAIN_CLIENT_LOCAL_CLUSTER_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/net/channel_security.h"
#include "common/process/child_process.h"
#include "protos/cluster.pb.h"

namespace pstrain {

// A host of its own for one task of a cluster that spans hosts (the
// rehearsal's network namespaces, scripts/netns_hosts.sh): how the task's
// command is started there, and the name every host knows it by.
struct TaskHost {
  // Put before the task's command: {"ip", "netns", "exec", "r1-ps-1"}.
  std::vector<std::string> launcher;
  // The host's name as every host (and this process) resolves it:
  // "pstrain-ps-1.pstrain.svc".
  std::string name;
};

struct LocalClusterOptions {
  int num_ps = 1;       // shards, >= 1
  // Hot-standby replicas per shard, 0 or 1 (the coordinator's
  // --ps_replicas): with 1, tasks ps/num_ps .. ps/(2 num_ps - 1) start too,
  // as the shards' backups.
  int ps_replicas = 0;
  int num_workers = 1;  // >= 1
  bool evaluator = true;
  // Where the binaries are; empty: found as LocateBinary says.
  std::string bin_dir;
  // Logs (<role>-<index>.log) and ready files go here; created if missing.
  // Required.
  std::string run_dir;
  // Where every job's model_dir must lie (the coordinator's and parameter
  // servers' --checkpoint_root). Empty: the binaries' default.
  std::string checkpoint_root;
  // Where the coordinator listens. Port 0 picks a free one; a fixed port
  // lets other commands find it (`pstrain status` tries localhost:7070).
  std::string coordinator_listen = "127.0.0.1:0";
  // How long one process may take to start serving.
  absl::Duration start_timeout = absl::Seconds(30);
  // Passed to every process as --tls_cert, --tls_key, --tls_ca,
  // --tls_client_auth=require, --client_token_file, --cluster_token_file
  // (security_flags.h); the cluster's own health checks present tls_cert as
  // their client certificate. Default: all empty, plaintext without tokens.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  bool tls_require_client_cert = false;
  std::string client_token_file;
  std::string cluster_token_file;
  // Shared-memory lanes between workers and parameter servers (their
  // --shm). Default on: every process of a local cluster shares the host.
  bool shared_memory = true;
  // More flags for the coordinator, as "--name=value" (tests that freeze
  // processes shorten --heartbeat_timeout_secs).
  std::vector<std::string> coordinator_flags;
  // More flags for one task, by name: {"ps/1", {"--advertise_address=..."}}.
  std::map<std::string, std::vector<std::string>> task_flags;
  // Where each task runs, by name ("ps/1"). Empty (the default): every task
  // on this host, on loopback ports picked at start. Otherwise every task
  // needs a host, and runs as a TFJob's pod does: it learns the cluster
  // from TF_CONFIG, written with the hosts' names as Kubeflow's operator
  // writes it, and serves gRPC on 0.0.0.0:host_grpc_port and /metrics on
  // 0.0.0.0:host_metrics_port of its host (coordinator_listen is unused).
  std::map<std::string, TaskHost> hosts;
  int host_grpc_port = 2222;
  int host_metrics_port = 9090;
};

// One process of a local cluster.
struct LocalTask {
  std::string role;  // coordinator, ps, worker, evaluator
  int index = 0;
  std::string grpc_address;
  std::string metrics_address;
  std::string log_path;
  int pid = 0;

  std::string name() const;  // "ps/0"
};

// A process of the cluster that ended while it should be running.
struct TaskExit {
  LocalTask task;
  ExitStatus exit;
};

// How a worker removed from a running cluster ended (LocalCluster::RemoveWorker).
struct RemovedWorker {
  LocalTask task;
  ExitStatus exit;
  // From the SIGTERM to its end.
  absl::Duration took;
  // It outlived the grace after SIGTERM and was killed with SIGKILL.
  bool killed_after_grace = false;
};

// A whole pstrain cluster as real processes on loopback, every port picked
// at start; its workers may be added and removed while it runs. Stops every
// process it started when destroyed. Not thread-safe.
class LocalCluster {
 public:
  // Starts the coordinator, then the parameter servers, workers and the
  // evaluator, and waits until each one answers its health check.
  // InvalidArgument: bad options (an unreadable TLS or token file).
  // NotFound: a binary is missing. Otherwise the first task that failed to
  // come up, with how it ended and the end of its log; the processes
  // already started are stopped.
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Start(const LocalClusterOptions& options);

  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;
  ~LocalCluster();

  const std::vector<LocalTask>& tasks() const { return tasks_; }
  const LocalTask& coordinator() const { return tasks_.front(); }
  // "https" for the coordinator's metrics port under TLS (it carries the
  // console), else "http".
  const char* HttpSchemeOf(const LocalTask& task) const;
  // The coordinator's web console: <scheme>://<its metrics address>/.
  std::string console_url() const;

  // What a client of this cluster's JobService dials with: its TLS (the
  // tls_cert of the options as client certificate) and the client token.
  const ChannelSecurity& client_security() const { return client_security_; }

  // <run_dir>/prometheus_targets.json: every process's /metrics address in
  // Prometheus' file_sd format, labelled task_type and task_index, written
  // once all of them serve; point a file_sd_configs entry at it
  // (deploy/prometheus/prometheus.yml).
  const std::string& prometheus_targets_path() const { return prometheus_targets_path_; }

  // OK when every process runs and answers SERVING; otherwise names the
  // first that does not and why.
  absl::Status CheckHealthy();

  // The first process that has ended (they are all meant to run until
  // Stop), without blocking; nullopt while every one runs. Cheap enough to
  // poll a few times a second.
  std::optional<TaskExit> FirstExitedTask();

  // Waits until every process has ended by itself, as a one-shot cluster's
  // do once its job ends (pstrain-coordinator --job); how each ended, in
  // task order. DeadlineExceeded, naming those that still run, once
  // `timeout` passes first (they keep running).
  absl::StatusOr<std::vector<TaskExit>> AwaitEnd(absl::Duration timeout);

  // SIGTERM to workers and the evaluator first, then parameter servers, then
  // the coordinator, each given `grace` to exit. OK when every process
  // exited 0; otherwise lists those that did not and how they ended.
  absl::Status Stop(absl::Duration grace);

  // Sends `signal` to task `name` ("coordinator/0", "ps/1"; SIGKILL is a
  // crash) and waits up to `timeout` for it to end. Returns how it ended.
  // NotFound: no such task. DeadlineExceeded: it still runs.
  absl::StatusOr<ExitStatus> KillTask(const std::string& name, int signal, absl::Duration timeout);

  // Starts task `name` again once it has ended, with the same flags and on
  // the same gRPC and metrics addresses, so the other processes find it
  // where it was, and waits until it serves. Its log goes on in the same
  // file, below a line that says how the earlier run ended.
  // NotFound: no such task. FailedPrecondition: it still runs. Otherwise
  // as Start (the address may have been taken meanwhile).
  absl::Status RestartTask(const std::string& name);

  // The workers running now (started, added, not removed).
  int num_workers() const;

  // Starts one more worker, as a worker StatefulSet scaled up does: the
  // lowest worker index not in use, the flags every worker has, fresh
  // loopback ports, its log <run_dir>/worker-<index>.log (below a marker
  // when that index ran before), and waits until it serves; then rewrites
  // prometheus_targets.json. The coordinator keeps the worker count it
  // started with: a worker beyond it joins a running job as far as the
  // job's mode allows. The new task.
  // FailedPrecondition: the tasks are placed on hosts (their TF_CONFIG
  // lists every task, so the set cannot change). Otherwise as Start; a
  // worker that did not come up is stopped and not kept.
  absl::StatusOr<LocalTask> AddWorker();

  // Removes the worker with the highest index, as a StatefulSet scaled down
  // does: SIGTERM (a worker then hands its data lease back and leaves), up
  // to `grace` for it to exit, then SIGKILL; then it is no task of the
  // cluster any more (FirstExitedTask never reports it, nothing restarts
  // it) and prometheus_targets.json is rewritten. How it ended.
  // FailedPrecondition: the tasks are placed on hosts, or only one worker
  // is left (a job needs one).
  absl::StatusOr<RemovedWorker> RemoveWorker(absl::Duration grace);

 private:
  LocalCluster() = default;
  // Adds a task and starts it.
  absl::Status StartTask(const std::string& program, const std::string& role, int index);
  // Starts the process of tasks_[i] (on its addresses once it has them) and
  // waits until it serves.
  absl::Status LaunchTask(size_t i);
  // The index of task `name` in tasks_. NotFound: no such task.
  absl::StatusOr<size_t> FindTask(const std::string& name) const;
  // FailedPrecondition when the tasks are placed on hosts.
  absl::Status CheckWorkersCanChange(absl::string_view change) const;
  // Writes prometheus_targets.json for the tasks there are now.
  absl::Status WritePrometheusTargets();

  // The cluster TF_CONFIG gives every task when options_.hosts places them.
  ClusterSpec hosts_cluster_;
  std::string prometheus_targets_path_;
  // TLS of the cluster's own health checks.
  ChannelSecurity health_security_;
  ChannelSecurity client_security_;
  LocalClusterOptions options_;
  std::vector<LocalTask> tasks_;
  // Parallel to tasks_.
  std::vector<std::string> programs_;
  std::vector<std::unique_ptr<ChildProcess>> processes_;
  // Worker indexes removed so far: one added again keeps the removed run's
  // log above a marker.
  std::set<int> removed_worker_indexes_;
};

// The last `max_lines` lines of a file, for error messages.
std::string TailOfFile(const std::string& path, int max_lines);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_LOCAL_CLUSTER_H_
