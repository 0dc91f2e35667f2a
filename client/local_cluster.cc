#include "client/local_cluster.h"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/binary_locator.h"
#include "common/config/tf_config.h"
#include "common/daemon/ready_file.h"
#include "common/metrics/scrape_targets.h"
#include "common/net/health_client.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

absl::Status MakeDirectories(const std::string& path) {
  std::string prefix;
  for (size_t start = 0; start <= path.size();) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    prefix = path.substr(0, slash);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create ", prefix, ": ", std::strerror(errno)));
    }
    start = slash + 1;
  }
  return absl::OkStatus();
}

// Stop order: those that call others first, so nobody sees its server
// vanish mid-call.
int StopRank(const std::string& role) {
  if (role == "worker" || role == "evaluator") return 0;
  if (role == "ps") return 1;
  return 2;
}

}  // namespace

std::string LocalTask::name() const { return absl::StrCat(role, "/", index); }

std::string TailOfFile(const std::string& path, int max_lines) {
  std::ifstream in(path);
  std::deque<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
    if (static_cast<int>(lines.size()) > max_lines) lines.pop_front();
  }
  return absl::StrJoin(lines, "\n");
}

namespace {

absl::Status CheckSizes(const LocalClusterOptions& options) {
  if (options.num_ps < 1) {
    return absl::InvalidArgumentError(absl::StrCat("num_ps must be >= 1, got ", options.num_ps));
  }
  if (options.ps_replicas < 0 || options.ps_replicas > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ps_replicas must be 0 or 1, got ", options.ps_replicas));
  }
  if (options.num_workers < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_workers must be >= 1, got ", options.num_workers));
  }
  if (options.run_dir.empty()) return absl::InvalidArgumentError("run_dir is required");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Start(
    const LocalClusterOptions& options) {
  RETURN_IF_ERROR(CheckSizes(options));
  RETURN_IF_ERROR(MakeDirectories(options.run_dir));
  const int ps_processes = options.num_ps * (1 + options.ps_replicas);

  // Every binary is found before anything starts, so a missing one changes
  // nothing.
  struct Plan {
    std::string program;
    std::string role;
    int count;
  };
  std::vector<Plan> plans = {{"pstrain-coordinator", "coordinator", 1},
                             {"pstrain-ps", "ps", ps_processes},
                             {"pstrain-worker", "worker", options.num_workers},
                             {"pstrain-evaluator", "evaluator", options.evaluator ? 1 : 0}};
  for (Plan& plan : plans) {
    ASSIGN_OR_RETURN(plan.program, LocateBinary(plan.program, options.bin_dir));
  }

  std::unique_ptr<LocalCluster> cluster(new LocalCluster());
  cluster->options_ = options;
  if (!options.hosts.empty()) {
    ClusterSpec& spec = cluster->hosts_cluster_;
    std::vector<std::string> unplaced;
    for (const Plan& plan : plans) {
      for (int index = 0; index < plan.count; ++index) {
        const std::string task = absl::StrCat(plan.role, "/", index);
        auto host = options.hosts.find(task);
        if (host == options.hosts.end() || host->second.launcher.empty() ||
            host->second.name.empty()) {
          unplaced.push_back(task);
          continue;
        }
        const std::string address = absl::StrCat(host->second.name, ":", options.host_grpc_port);
        if (plan.role == "coordinator") spec.add_chief(address);
        if (plan.role == "ps") spec.add_ps(address);
        if (plan.role == "worker") spec.add_worker(address);
        if (plan.role == "evaluator") spec.add_evaluator(address);
      }
    }
    if (!unplaced.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("hosts places some tasks but not ",
                                                     absl::StrJoin(unplaced, ", "),
                                                     " (each needs a launcher and a host name)"));
    }
  }
  SecurityOptions health;
  health.tls_cert_file = options.tls_cert;
  health.tls_key_file = options.tls_key;
  health.tls_ca_file = options.tls_ca;
  ASSIGN_OR_RETURN(cluster->health_security_, MakeChannelSecurity(health, ""));
  std::string client_token;
  if (!options.client_token_file.empty()) {
    ASSIGN_OR_RETURN(client_token, ReadSecretFile(options.client_token_file));
  }
  ASSIGN_OR_RETURN(cluster->client_security_, MakeChannelSecurity(health, client_token));
  for (const Plan& plan : plans) {
    for (int index = 0; index < plan.count; ++index) {
      absl::Status started = cluster->StartTask(plan.program, plan.role, index);
      if (!started.ok()) {
        cluster->Stop(absl::Seconds(5)).IgnoreError();
        return started;
      }
    }
  }
  cluster->prometheus_targets_path_ = options.run_dir + "/prometheus_targets.json";
  if (absl::Status written = cluster->WritePrometheusTargets(); !written.ok()) {
    cluster->Stop(absl::Seconds(5)).IgnoreError();
    return written;
  }
  return cluster;
}

absl::Status LocalCluster::StartTask(const std::string& program, const std::string& role,
                                     int index) {
  LocalTask task;
  task.role = role;
  task.index = index;
  task.log_path = absl::StrCat(options_.run_dir, "/", role, "-", index, ".log");
  // A log left by an earlier cluster in the same folder would mislead; one
  // of a worker removed from this cluster stays above its marker.
  if (role != "worker" || removed_worker_indexes_.count(index) == 0) {
    std::remove(task.log_path.c_str());
  }
  tasks_.push_back(std::move(task));
  programs_.push_back(program);
  processes_.push_back(nullptr);
  absl::Status launched = LaunchTask(tasks_.size() - 1);
  if (processes_.back() == nullptr) {  // no process to stop later
    tasks_.pop_back();
    programs_.pop_back();
    processes_.pop_back();
  }
  return launched;
}

absl::Status LocalCluster::LaunchTask(size_t i) {
  const LocalClusterOptions& options = options_;
  const LocalTask task = tasks_[i];
  const std::string& role = task.role;
  const int index = task.index;
  const std::string ready_path = absl::StrCat(options.run_dir, "/", role, "-", index, ".ready");
  std::remove(ready_path.c_str());

  ChildProcessOptions child;
  child.program = programs_[i];
  const auto host = options.hosts.find(task.name());
  if (host != options.hosts.end()) {
    // As a TFJob's pod: its place in the cluster from TF_CONFIG, serving on
    // every interface of its own host.
    child.program = host->second.launcher.front();
    child.args.assign(host->second.launcher.begin() + 1, host->second.launcher.end());
    child.args.push_back(programs_[i]);
    child.args.push_back(absl::StrCat("--metrics_listen=0.0.0.0:", options.host_metrics_port));
    TaskId id;
    ASSIGN_OR_RETURN(const TaskType type, TaskTypeFromName(role == "coordinator" ? "chief" : role));
    id.set_type(type);
    id.set_index(index);
    child.env.push_back(absl::StrCat("TF_CONFIG=", FormatTfConfig(hosts_cluster_, id)));
  } else {
    // A restarted task takes the addresses it had, where the others look.
    std::string listen = role == "coordinator" ? options.coordinator_listen : "127.0.0.1:0";
    if (!task.grpc_address.empty()) listen = task.grpc_address;
    const std::string metrics_listen =
        task.metrics_address.empty() ? "127.0.0.1:0" : task.metrics_address;
    child.args = {absl::StrCat("--listen=", listen),
                  absl::StrCat("--metrics_listen=", metrics_listen),
                  absl::StrCat("--task_index=", index)};
    if (role != "coordinator") {
      child.args.push_back(absl::StrCat("--coordinator_address=", coordinator().grpc_address));
    }
  }
  child.args.push_back(absl::StrCat("--ready_file=", ready_path));
  if (role == "coordinator") {
    // A job waits for every process of the cluster, not only those that
    // happen to have registered when it starts.
    child.args.push_back(absl::StrCat("--num_ps=", options.num_ps * (1 + options.ps_replicas)));
    child.args.push_back(absl::StrCat("--ps_replicas=", options.ps_replicas));
    child.args.push_back(absl::StrCat("--num_workers=", options.num_workers));
    for (const std::string& flag : options.coordinator_flags) child.args.push_back(flag);
  }
  for (const auto& [flag, value] :
       {std::pair<const char*, const std::string*>{"tls_cert", &options.tls_cert},
        {"tls_key", &options.tls_key},
        {"tls_ca", &options.tls_ca},
        {"client_token_file", &options.client_token_file},
        {"cluster_token_file", &options.cluster_token_file}}) {
    if (!value->empty()) child.args.push_back(absl::StrCat("--", flag, "=", *value));
  }
  if (options.tls_require_client_cert) child.args.push_back("--tls_client_auth=require");
  if (!options.shared_memory && (role == "ps" || role == "worker")) {
    child.args.push_back("--shm=false");
  }
  if (!options.checkpoint_root.empty() && (role == "coordinator" || role == "ps")) {
    child.args.push_back(absl::StrCat("--checkpoint_root=", options.checkpoint_root));
  }
  if (auto extra = options.task_flags.find(task.name()); extra != options.task_flags.end()) {
    child.args.insert(child.args.end(), extra->second.begin(), extra->second.end());
  }
  child.log_path = task.log_path;
  ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> process, ChildProcess::Start(child));
  tasks_[i].pid = process->pid();
  ChildProcess* raw = process.get();
  processes_[i] = std::move(process);

  auto describe_failure = [&](const absl::Status& why) {
    return absl::Status(
        why.code(), absl::StrCat(task.name(), " did not start: ", why.message(), "\n--- end of ",
                                 task.log_path, " ---\n", TailOfFile(task.log_path, 15)));
  };
  absl::StatusOr<ReadyInfo> ready =
      WaitForReadyFile(ready_path, options.start_timeout, [&]() -> absl::Status {
        std::optional<ExitStatus> exit = raw->Poll();
        if (!exit.has_value()) return absl::OkStatus();
        return absl::AbortedError(absl::StrCat("it exited with ", exit->ToString()));
      });
  if (!ready.ok()) return describe_failure(ready.status());
  if (host != options.hosts.end()) {
    // It binds 0.0.0.0; the others reach it by its host's name.
    tasks_[i].grpc_address = absl::StrCat(host->second.name, ":", options.host_grpc_port);
    tasks_[i].metrics_address = absl::StrCat(host->second.name, ":", options.host_metrics_port);
  } else {
    tasks_[i].grpc_address = (*ready)["grpc"];
    tasks_[i].metrics_address = (*ready)["metrics"];
  }
  absl::Status health =
      CheckHealth(tasks_[i].grpc_address, absl::Seconds(10), "", health_security_);
  if (!health.ok()) return describe_failure(health);
  return absl::OkStatus();
}

absl::StatusOr<size_t> LocalCluster::FindTask(const std::string& name) const {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].name() == name) return i;
  }
  return absl::NotFoundError(absl::StrCat("no task ", name, " in this cluster"));
}

absl::StatusOr<ExitStatus> LocalCluster::KillTask(const std::string& name, int signal,
                                                  absl::Duration timeout) {
  ASSIGN_OR_RETURN(const size_t i, FindTask(name));
  processes_[i]->Signal(signal);
  return processes_[i]->Wait(timeout);
}

absl::Status LocalCluster::RestartTask(const std::string& name) {
  ASSIGN_OR_RETURN(const size_t i, FindTask(name));
  const std::optional<ExitStatus> exit = processes_[i]->Poll();
  if (!exit.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " (pid ", tasks_[i].pid, ") still runs; kill it first"));
  }
  // The earlier run's lines stay above, for whoever looks for why it ended.
  std::ofstream(tasks_[i].log_path, std::ios::app)
      << "---- " << name << " (pid " << tasks_[i].pid << ") exited with " << exit->ToString()
      << "; restarted at " << absl::FormatTime(absl::Now()) << " ----\n";
  return LaunchTask(i);
}

absl::Status LocalCluster::WritePrometheusTargets() {
  // Not "role": the coordinator's own series carry a role label, which a
  // target label of that name would rename to exported_role.
  std::vector<ScrapeTarget> targets;
  for (const LocalTask& task : tasks_) {
    targets.push_back({task.metrics_address,
                       {{"task_type", task.role}, {"task_index", absl::StrCat(task.index)}}});
  }
  return WriteScrapeTargets(prometheus_targets_path_, targets);
}

int LocalCluster::num_workers() const {
  int workers = 0;
  for (const LocalTask& task : tasks_) workers += task.role == "worker" ? 1 : 0;
  return workers;
}

absl::Status LocalCluster::CheckWorkersCanChange(absl::string_view change) const {
  if (options_.hosts.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("cannot ", change, ": this cluster places its tasks on hosts, and every ",
                   "task's TF_CONFIG lists the workers it started with"));
}

absl::StatusOr<LocalTask> LocalCluster::AddWorker() {
  RETURN_IF_ERROR(CheckWorkersCanChange("add a worker"));
  std::set<int> in_use;
  std::string program;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].role != "worker") continue;
    in_use.insert(tasks_[i].index);
    program = programs_[i];
  }
  if (program.empty()) {
    ASSIGN_OR_RETURN(program, LocateBinary("pstrain-worker", options_.bin_dir));
  }
  int index = 0;
  while (in_use.count(index) > 0) ++index;
  const std::string name = absl::StrCat("worker/", index);
  if (removed_worker_indexes_.count(index) > 0) {
    std::ofstream(absl::StrCat(options_.run_dir, "/worker-", index, ".log"), std::ios::app)
        << "---- " << name << " added again at " << absl::FormatTime(absl::Now()) << " ----\n";
  }
  if (absl::Status started = StartTask(program, "worker", index); !started.ok()) {
    // One that runs but never served is no member: nothing would restart
    // it, and a later add takes its index.
    if (!tasks_.empty() && tasks_.back().name() == name) {
      processes_.back()->Stop(absl::Seconds(5));
      tasks_.pop_back();
      programs_.pop_back();
      processes_.pop_back();
    }
    return started;
  }
  const LocalTask added = tasks_.back();
  RETURN_IF_ERROR(WritePrometheusTargets());
  return added;
}

absl::StatusOr<RemovedWorker> LocalCluster::RemoveWorker(absl::Duration grace) {
  RETURN_IF_ERROR(CheckWorkersCanChange("remove a worker"));
  std::optional<size_t> highest;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].role != "worker") continue;
    if (!highest.has_value() || tasks_[i].index > tasks_[*highest].index) highest = i;
  }
  if (num_workers() <= 1) {
    return absl::FailedPreconditionError("cannot remove the last worker: a job needs one");
  }
  const size_t i = *highest;
  RemovedWorker removed;
  removed.task = tasks_[i];
  const absl::Time start = absl::Now();
  processes_[i]->Signal(SIGTERM);
  absl::StatusOr<ExitStatus> exit = processes_[i]->Wait(grace);
  if (!exit.ok()) {
    removed.killed_after_grace = true;
    processes_[i]->Signal(SIGKILL);
    exit = processes_[i]->Wait(absl::Seconds(10));
  }
  if (!exit.ok()) {
    return absl::InternalError(absl::StrCat(removed.task.name(), " (pid ", removed.task.pid,
                                            ") still runs after SIGTERM and SIGKILL"));
  }
  removed.exit = *exit;
  removed.took = absl::Now() - start;
  std::ofstream(removed.task.log_path, std::ios::app)
      << "---- " << removed.task.name() << " (pid " << removed.task.pid << ") removed from the "
      << "cluster; it exited with " << exit->ToString() << " ----\n";
  tasks_.erase(tasks_.begin() + i);
  programs_.erase(programs_.begin() + i);
  processes_.erase(processes_.begin() + i);
  removed_worker_indexes_.insert(removed.task.index);
  if (absl::Status written = WritePrometheusTargets(); !written.ok()) {
    return absl::Status(written.code(), absl::StrCat(removed.task.name(), " left, but ",
                                                     written.message()));
  }
  return removed;
}

LocalCluster::~LocalCluster() { Stop(absl::Seconds(5)).IgnoreError(); }

absl::Status LocalCluster::CheckHealthy() {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (std::optional<ExitStatus> exit = processes_[i]->Poll()) {
      return absl::UnavailableError(
          absl::StrCat(tasks_[i].name(), " exited with ", exit->ToString()));
    }
    if (absl::Status health =
            CheckHealth(tasks_[i].grpc_address, absl::Seconds(5), "", health_security_);
        !health.ok()) {
      return absl::Status(health.code(), absl::StrCat(tasks_[i].name(), ": ", health.message()));
    }
  }
  return absl::OkStatus();
}

std::optional<TaskExit> LocalCluster::FirstExitedTask() {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (std::optional<ExitStatus> exit = processes_[i]->Poll()) return TaskExit{tasks_[i], *exit};
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<TaskExit>> LocalCluster::AwaitEnd(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    std::vector<TaskExit> ended;
    std::vector<std::string> running;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (std::optional<ExitStatus> exit = processes_[i]->Poll()) {
        ended.push_back(TaskExit{tasks_[i], *exit});
      } else {
        running.push_back(tasks_[i].name());
      }
    }
    if (running.empty()) return ended;
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("still running after ",
                                                      absl::FormatDuration(timeout), ": ",
                                                      absl::StrJoin(running, ", ")));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

absl::Status LocalCluster::Stop(absl::Duration grace) {
  std::vector<std::string> failures;
  for (int rank = 0; rank <= 2; ++rank) {
    // Send every signal of a rank first, so they wind down in parallel.
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (StopRank(tasks_[i].role) == rank) processes_[i]->Signal(SIGTERM);
    }
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (StopRank(tasks_[i].role) != rank) continue;
      ExitStatus exit = processes_[i]->Stop(grace);
      if (!exit.ok()) {
        failures.push_back(absl::StrCat(tasks_[i].name(), " ended with ", exit.ToString(),
                                        " (log: ", tasks_[i].log_path, ")"));
      }
    }
  }
  if (failures.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrJoin(failures, "; "));
}

const char* LocalCluster::HttpSchemeOf(const LocalTask& task) const {
  return task.role == "coordinator" && !options_.tls_cert.empty() ? "https" : "http";
}

std::string LocalCluster::console_url() const {
  return absl::StrCat(HttpSchemeOf(coordinator()), "://", coordinator().metrics_address, "/");
}

}  // namespace pstrain
