// pstrain-coordinator: the chief of a pstrain cluster.

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/checkpoint_root.h"
#include "common/config/job_spec_parser.h"
#include "common/daemon/daemon_main.h"
#include "common/daemon/exit_codes.h"
#include "common/net/token_auth.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "server/console/console.h"
#include "server/coordinator/cluster_service.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/grpc_shard_client.h"
#include "server/coordinator/job_limits.h"
#include "server/coordinator/job_paths.h"
#include "server/coordinator/job_planner.h"
#include "server/coordinator/job_service.h"
#include "server/coordinator/job_state.h"
#include "server/coordinator/one_shot_job.h"

DEFINE_string(checkpoint_root, pstrain::kDefaultCheckpointRoot,
              "Folder under which every job's checkpoint.model_dir (and warm_start_from, "
              "export_dir) must lie; relative ones are taken from it. Give the parameter "
              "servers the same --checkpoint_root: they write the shard files there. A "
              "leading ~ is $HOME (or /tmp without one).");
DEFINE_int32(num_ps, 0,
             "Parameter servers a training job runs on (ps/0 .. ps/N-1); it waits for all of "
             "them. 0: the number TF_CONFIG's cluster.ps lists, else those registered when "
             "the job starts.");
DEFINE_int32(ps_replicas, 0,
             "Hot-standby replicas per parameter-server shard: 0 or 1. With 1 a job on N "
             "shards runs on 2N parameter servers: shard i's primary ps/i and its backup "
             "ps/N+i, which holds the same state and takes over with no step lost when the "
             "primary is lost (docs/design/replicas.md). --num_ps and TF_CONFIG's cluster.ps "
             "then list all 2N processes.");
DEFINE_double(backup_rebuild_timeout_secs, 600,
              "With --ps_replicas=1: how long a lost replica that came back may take to get "
              "its primary's state and catch up as the shard's backup before the rebuild is "
              "given up (and tried again later); training goes on meanwhile.");
DEFINE_int32(num_workers, 0,
             "Workers a training job waits for at its start (worker/0 .. worker/N-1). 0: the "
             "number TF_CONFIG's cluster.worker lists, else those registered when the job "
             "starts. More workers may join a running job (up to --max_workers) and workers "
             "may leave it; a sync job with replicas_to_aggregate 0 takes the change at a "
             "round boundary, when the workers right above its ranks join or its top ones "
             "leave.");
DEFINE_int32(max_workers, 256,
             "Workers join a running job as worker/0 .. worker/N-1 at most; each parameter "
             "server keeps a place for one sync-round push per rank.");
DEFINE_double(heartbeat_interval_secs, 2, "How often members send heartbeats.");
DEFINE_double(heartbeat_timeout_secs, 10,
              "A member silent this long is marked lost and its work handed to others.");
DEFINE_double(member_wait_secs, 600,
              "How long a job waits for its parameter servers, workers and evaluator to "
              "register before it fails, naming the ones missing.");
DEFINE_double(final_eval_timeout_secs, 1800,
              "How long a job waits for the evaluation of its final checkpoint before it fails.");
DEFINE_double(stop_drain_secs, 60,
              "After a stop, how long workers get to hear it before the final checkpoint is "
              "taken regardless.");
DEFINE_int64(records_per_lease, 0,
             "Training records per data lease. 0 (default): a quarter of each worker's share "
             "of an epoch, from 1024 to 16384 records (7500 for Fashion-MNIST on 2 workers).");
DEFINE_double(lease_timeout_secs, 300,
              "A data lease not completed within this time goes back to the queue.");
DEFINE_int32(max_queued_jobs, 100,
             "Jobs that may wait in the queue; a submit beyond it is refused with "
             "RESOURCE_EXHAUSTED (`pstrain submit` exits 4: try again later).");
// Per-job limits, checked when a job plans, its first phase (job_limits.h):
// a job over one ends FAILED with a reason naming its figure, the limit and
// the flag, before any parameter server holds a variable of it; `pstrain
// validate` checks them without queueing.
DEFINE_int64(max_variables_per_job, 10000,
             "Variables a job's model may have; a job with more fails as it starts.");
DEFINE_int64(max_dense_mb_per_job, 4096,
             "MiB of dense parameters (float32 values) a job may have; every worker holds all "
             "of them. A job with more fails as it starts.");
DEFINE_int64(max_embedding_mb_per_job, 32768,
             "MiB the embedding tables of a job may take on the parameter servers, values and "
             "optimizer slots over all shards (a dynamic table counts its budget on each "
             "shard). A job with more fails as it starts.");
DEFINE_int64(default_table_mb_per_shard, 256,
             "Budget per parameter server given to a dynamic embedding table that has none "
             "(embedding.max_bytes_per_shard); past it the least recently updated rows are "
             "evicted. 0: refuse such tables at submit instead.");
DEFINE_string(state_dir, "",
              "Folder of the coordinator's job journal: one small file per queued, running or "
              "recently ended job and the job-id counter. A coordinator that starts on it again "
              "(killed, rescheduled, upgraded) resumes the job that was running, under the same "
              "id, from its newest checkpoint, then runs the queue, and never reuses an id. "
              "Empty: <checkpoint_root>/.coordinator (on Kubernetes, the shared model_dir "
              "volume), or with --job <the job's model_dir>/.coordinator. \"none\": jobs live "
              "in memory only and are lost with the process.");
DEFINE_string(job, "",
              "A one-shot cluster: run the job spec in this file (.pbtxt or .json) as the "
              "coordinator starts, then shut the cluster down when the job ends. The coordinator "
              "and every member exit 0 when it SUCCEEDED, 3 when it FAILED, 4 when it was "
              "stopped (pstrain stop); a spec that is refused is exit code 2. The coordinator's "
              "state lives in the job's model_dir (see --state_dir), so one started again with "
              "the same file resumes the job from its newest checkpoint, or exits at once with "
              "the outcome of a job that already ended; one stopped by SIGTERM before the job "
              "ended exits 128 + 15 (resumable). Empty: a long-lived cluster that runs the jobs "
              "`pstrain submit` sends it, one after another.");
DEFINE_bool(resume_after_sigterm, true,
            "On SIGTERM, leave the running job recorded as running in --state_dir, so the next "
            "coordinator resumes it from its newest checkpoint (a rolling update or a "
            "rescheduled pod does not end jobs); queued jobs stay queued. false: SIGTERM ends "
            "the running job FAILED. `pstrain stop` and `pstrain shutdown` end jobs either "
            "way.");

DEFINE_bool(console, true,
            "Serve the web console (jobs, one job's live plots, the cluster; docs/console.md) "
            "on the --metrics_listen port beside /metrics: HTTPS under --tls_cert, and with "
            "--client_token_file only for those who give the client token.");
DEFINE_bool(console_stop, false,
            "Let the web console stop jobs (a button on a running job's page, with a "
            "confirmation; under --client_token_file it needs the client token). Default: the "
            "console only reads.");

namespace {

constexpr char kUsage[] =
    "pstrain-coordinator: the chief of a pstrain cluster. It holds the job queue and the\n"
    "running job, tracks membership, the global step and every stop condition, takes\n"
    "checkpoints, and serves the client API that `pstrain` talks to.\n"
    "\n"
    "Usage: pstrain-coordinator [--listen=HOST:PORT] [--metrics_listen=HOST:PORT]\n"
    "   or: TF_CONFIG='{\"cluster\": {\"chief\": [...], ...}, \"task\": {\"type\": \"chief\"}}'\n"
    "       pstrain-coordinator   (flags win over TF_CONFIG)\n"
    "\n"
    "Serves JobService and ClusterService, the gRPC health service, Prometheus metrics\n"
    "(pstrain_coordinator_*) on /metrics and beside them a web console (--console).\n"
    "Exits 0 on SIGTERM or SIGINT after letting calls in flight finish\n"
    "(--shutdown_grace_secs), or after a Shutdown call.\n"
    "\n"
    "Jobs are recorded in --state_dir (default <checkpoint_root>/.coordinator). Started\n"
    "again on the same folder, after a crash, kill -9 or SIGTERM, it resumes the job that\n"
    "was running from its newest checkpoint under the same job id, then runs the queue.\n"
    "SIGTERM leaves the running job to resume (--resume_after_sigterm); `pstrain shutdown`\n"
    "and `pstrain stop` end jobs.\n"
    "\n"
    "With --job=FILE it runs that one job and ends the cluster with it: every process\n"
    "exits 0 when the job SUCCEEDED, 3 when it FAILED, 4 when it was stopped (a\n"
    "Kubernetes Job or a Kubeflow TFJob per training run).";

absl::Duration Seconds(const char* flag, double value, absl::Status* error) {
  if (!(value > 0)) {
    *error = absl::InvalidArgumentError(absl::StrCat("--", flag, " must be > 0, got ", value));
  }
  return absl::Seconds(value);
}

// The spec of --job with its paths made absolute under --checkpoint_root
// (already expanded); nullopt without --job.
absl::StatusOr<std::optional<pstrain::JobSpec>> OneShotSpecFromFlags(pstrain::Env& env) {
  if (FLAGS_job.empty()) return std::nullopt;
  absl::StatusOr<pstrain::JobSpec> spec = pstrain::LoadJobSpecFile(FLAGS_job);
  if (spec.ok()) {
    spec = pstrain::coordinator::ConfineJobPaths(env, FLAGS_checkpoint_root, *std::move(spec));
  }
  if (!spec.ok()) {
    return absl::Status(spec.status().code(),
                        absl::StrCat("--job ", FLAGS_job, ": ", spec.status().message()));
  }
  if (spec->checkpoint().model_dir().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--job ", FLAGS_job,
                     ": checkpoint.model_dir is required (a one-shot coordinator keeps its "
                     "state there)"));
  }
  return spec;
}

absl::StatusOr<pstrain::coordinator::CoordinatorOptions> OptionsFromFlags(
    const pstrain::ClusterSpec& cluster, const std::optional<pstrain::JobSpec>& one_shot) {
  pstrain::coordinator::CoordinatorOptions options;
  absl::Status error;
  options.membership.heartbeat_interval =
      Seconds("heartbeat_interval_secs", FLAGS_heartbeat_interval_secs, &error);
  options.membership.heartbeat_timeout =
      Seconds("heartbeat_timeout_secs", FLAGS_heartbeat_timeout_secs, &error);
  options.runner.member_wait_timeout = Seconds("member_wait_secs", FLAGS_member_wait_secs, &error);
  options.runner.final_eval_timeout =
      Seconds("final_eval_timeout_secs", FLAGS_final_eval_timeout_secs, &error);
  options.runner.stop_drain_timeout = Seconds("stop_drain_secs", FLAGS_stop_drain_secs, &error);
  options.runner.lease_timeout = Seconds("lease_timeout_secs", FLAGS_lease_timeout_secs, &error);
  options.runner.backup_rebuild_timeout =
      Seconds("backup_rebuild_timeout_secs", FLAGS_backup_rebuild_timeout_secs, &error);
  if (!error.ok()) return error;
  if (FLAGS_num_ps < 0 || FLAGS_num_workers < 0) {
    return absl::InvalidArgumentError("--num_ps and --num_workers must be >= 0");
  }
  if (FLAGS_max_workers < 1 || FLAGS_max_workers > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_workers must be in [1, 4096], got ", FLAGS_max_workers));
  }
  constexpr int64_t kMaxMiB = int64_t{1} << 40;  // so that bytes fit in int64
  if (FLAGS_max_variables_per_job < 1 || FLAGS_max_dense_mb_per_job < 1 ||
      FLAGS_max_embedding_mb_per_job < 1 || FLAGS_default_table_mb_per_shard < 0 ||
      FLAGS_max_dense_mb_per_job > kMaxMiB || FLAGS_max_embedding_mb_per_job > kMaxMiB ||
      FLAGS_default_table_mb_per_shard > kMaxMiB) {
    return absl::InvalidArgumentError(
        "--max_variables_per_job, --max_dense_mb_per_job and --max_embedding_mb_per_job must be "
        ">= 1, --default_table_mb_per_shard >= 0, and each MiB figure at most 2^40");
  }
  if (FLAGS_records_per_lease < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--records_per_lease must be >= 0 (0: automatic), got ", FLAGS_records_per_lease));
  }
  if (FLAGS_ps_replicas < 0 || FLAGS_ps_replicas > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ps_replicas must be 0 or 1, got ", FLAGS_ps_replicas));
  }
  const int ps_tasks = FLAGS_num_ps > 0 ? FLAGS_num_ps : cluster.ps_size();
  const int per_shard = 1 + FLAGS_ps_replicas;
  if (ps_tasks % per_shard != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ps_replicas=", FLAGS_ps_replicas, " needs an even number of parameter servers (a "
        "primary and a backup per shard); --num_ps or TF_CONFIG's cluster.ps gives ", ps_tasks));
  }
  options.runner.num_ps = ps_tasks / per_shard;
  options.runner.ps_replicas = FLAGS_ps_replicas;
  options.runner.num_workers = FLAGS_num_workers > 0 ? FLAGS_num_workers : cluster.worker_size();
  options.runner.max_workers = FLAGS_max_workers;
  options.runner.records_per_lease = FLAGS_records_per_lease;
  options.queue.max_queued_jobs = FLAGS_max_queued_jobs;
  options.checkpoint_root = FLAGS_checkpoint_root;
  if (FLAGS_state_dir == "none") {
    options.state_dir.clear();
  } else if (!FLAGS_state_dir.empty()) {
    options.state_dir = FLAGS_state_dir;
  } else if (one_shot.has_value()) {
    // Its own, beside its checkpoints: one-shot clusters that share a
    // volume (one TFJob per run) must not take each other's jobs.
    options.state_dir = one_shot->checkpoint().model_dir() + "/.coordinator";
  } else if (!FLAGS_checkpoint_root.empty()) {
    options.state_dir = FLAGS_checkpoint_root + "/.coordinator";
  }
  if (!options.state_dir.empty() && options.state_dir.front() != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("--state_dir must be an absolute folder, got '", options.state_dir, "'"));
  }
  options.resume_running_job_after_stop = FLAGS_resume_after_sigterm;
  options.cluster = cluster;
  return options;
}

pstrain::coordinator::JobLimits LimitsFromFlags() {
  pstrain::coordinator::JobLimits limits;
  limits.max_variables = FLAGS_max_variables_per_job;
  limits.max_dense_bytes = FLAGS_max_dense_mb_per_job << 20;
  limits.max_embedding_bytes = FLAGS_max_embedding_mb_per_job << 20;
  limits.default_table_bytes_per_shard = FLAGS_default_table_mb_per_shard << 20;
  return limits;
}

// The coordinator's core and its two services, with what they run on.
class CoordinatorComponents : public pstrain::DaemonComponents {
 public:
  static absl::StatusOr<std::unique_ptr<CoordinatorComponents>> Create(
      pstrain::Daemon& daemon, const pstrain::ClusterSpec& cluster) {
    std::unique_ptr<CoordinatorComponents> components(new CoordinatorComponents(daemon));
    FLAGS_checkpoint_root = pstrain::ExpandCheckpointRoot(FLAGS_checkpoint_root);
    absl::StatusOr<std::optional<pstrain::JobSpec>> one_shot =
        OneShotSpecFromFlags(components->env_);
    if (!one_shot.ok()) return one_shot.status();
    absl::StatusOr<pstrain::coordinator::CoordinatorOptions> options =
        OptionsFromFlags(cluster, *one_shot);
    if (!options.ok()) return options.status();
    const pstrain::coordinator::JobLimits limits = LimitsFromFlags();
    // A job's limits are checked as it plans, where its data is read.
    components->limited_planner_ = std::make_unique<pstrain::coordinator::LimitedJobPlanner>(
        components->planner_, limits, options->runner.num_ps);
    options->queue.admit = [limits](pstrain::JobSpec& spec) {
      return pstrain::coordinator::FillTableBudgets(limits, spec);
    };
    pstrain::Clock& clock = components->clock_;
    absl::StatusOr<std::unique_ptr<pstrain::coordinator::Coordinator>> coordinator =
        pstrain::coordinator::Coordinator::Create(
            clock, components->env_, *components->limited_planner_,
            [&clock, &daemon](const std::string& address) {
              pstrain::coordinator::GrpcShardClientOptions shard;
              shard.security = daemon.options().channel_security;
              return std::make_unique<pstrain::coordinator::GrpcShardClient>(address, clock, shard);
            },
            &components->metrics_, *std::move(options),
            [&daemon](int exit_code) { daemon.RequestShutdown(exit_code); });
    if (!coordinator.ok()) return coordinator.status();
    components->coordinator_ = *std::move(coordinator);
    if (one_shot->has_value()) {
      // Submitted before serving: a refused spec stops the process at once.
      absl::StatusOr<std::unique_ptr<pstrain::coordinator::OneShotJob>> job =
          pstrain::coordinator::OneShotJob::Submit(*components->coordinator_,
                                                   **std::move(one_shot));
      if (!job.ok()) {
        return absl::Status(job.status().code(),
                            absl::StrCat("--job ", FLAGS_job, ": ", job.status().message()));
      }
      components->one_shot_ = *std::move(job);
    }
    components->cluster_service_ =
        std::make_unique<pstrain::coordinator::ClusterServiceImpl>(*components->coordinator_);
    components->job_service_ =
        std::make_unique<pstrain::coordinator::JobServiceImpl>(*components->coordinator_);
    components->coordinator_->Start();
    if (components->one_shot_ != nullptr) components->one_shot_->Start();
    return components;
  }

  std::vector<grpc::Service*> services() override {
    return {cluster_service_.get(), job_service_.get()};
  }

  // The coordinator is ready as soon as it serves: the others join it.
  absl::Status OnServing(pstrain::Daemon& daemon) override {
    if (FLAGS_console) {
      const pstrain::SecurityOptions& security = daemon.options().grpc.security;
      pstrain::console::ConsoleApiOptions options;
      options.coordinator_address = daemon.grpc_address();
      options.allow_stop = FLAGS_console_stop;
      console_ = std::make_unique<pstrain::console::Console>(
          daemon.http(), *coordinator_,
          pstrain::TokenAuthenticator(security.client_token, security.cluster_token),
          std::move(options));
      LOG(INFO) << "console on " << daemon.http().scheme() << "://" << daemon.metrics_address()
                << "/" << (FLAGS_console_stop ? " (may stop jobs)" : " (read-only)");
    }
    daemon.SetReady(true);
    return absl::OkStatus();
  }

  // Before the server stops: the running job is interrupted (left in the
  // journal to resume, or ended FAILED: --resume_after_sigterm), long polls
  // are answered and watch streams end, so nothing waits out the shutdown
  // grace.
  void OnShutdown() override {
    console_.reset();
    if (one_shot_ != nullptr) one_shot_->Stop();
    coordinator_->Stop();
  }

  // A one-shot job that has not ended is left to the next coordinator:
  // 128 + signal, which Kubernetes' restart policies (Kubeflow's ExitCode
  // among them) take as a reason to start it again. One that ended (also
  // FAILED by this stop, under --resume_after_sigterm=false) gives its
  // outcome.
  int ExitCodeAfterSignal(int signal) const override {
    if (one_shot_ == nullptr) return pstrain::kDaemonExitOk;
    const pstrain::JobState state = one_shot_->state();
    if (coordinator_->left_job_to_resume() || !pstrain::coordinator::IsEnded(state)) {
      return pstrain::kDaemonExitSignalBase + signal;
    }
    return pstrain::coordinator::ExitCodeForJobState(state);
  }

 private:
  explicit CoordinatorComponents(pstrain::Daemon& daemon) : metrics_(*daemon.registry()) {}

  pstrain::RealClock clock_;
  pstrain::PosixEnv env_;
  pstrain::coordinator::ModelJobPlanner planner_;
  std::unique_ptr<pstrain::coordinator::LimitedJobPlanner> limited_planner_;
  pstrain::coordinator::CoordinatorMetrics metrics_;
  std::unique_ptr<pstrain::coordinator::Coordinator> coordinator_;
  std::unique_ptr<pstrain::coordinator::ClusterServiceImpl> cluster_service_;
  std::unique_ptr<pstrain::coordinator::JobServiceImpl> job_service_;
  // Destroyed before the coordinator it follows.
  std::unique_ptr<pstrain::coordinator::OneShotJob> one_shot_;
  // Destroyed before the coordinator it reads; null with --noconsole.
  std::unique_ptr<pstrain::console::Console> console_;
};

}  // namespace

int main(int argc, char** argv) {
  return pstrain::RunDaemonMain(
      pstrain::TASK_TYPE_CHIEF, kUsage, argc, argv,
      [](pstrain::Daemon& daemon) -> absl::StatusOr<std::unique_ptr<pstrain::DaemonComponents>> {
        absl::StatusOr<std::unique_ptr<CoordinatorComponents>> components =
            CoordinatorComponents::Create(daemon, daemon.options().cluster.spec);
        if (!components.ok()) return components.status();
        return std::unique_ptr<pstrain::DaemonComponents>(*std::move(components));
      });
}
