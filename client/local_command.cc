#include "client/local_command.h"

#include <stdlib.h>

#include <iostream>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/coordinator_address.h"
#include "client/exit_code.h"
#include "client/job_json.h"
#include "client/job_spec_file.h"
#include "client/job_text.h"
#include "client/local_cluster.h"
#include "client/local_job.h"
#include "client/output_options.h"
#include "client/restart_policy.h"
#include "client/scale_inbox.h"
#include "client/task_supervisor.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "common/config/checkpoint_root.h"
#include "common/daemon/shutdown_signal.h"
#include "common/net/host_port.h"
#include "common/net/http_get.h"
#include "common/random/random_source.h"
#include "gflags/gflags.h"

// Defined in common/net/security_flags.cc; `local` passes them to every
// process it starts.
DECLARE_string(tls_cert);
DECLARE_string(tls_key);
DECLARE_string(tls_ca);
DECLARE_string(tls_client_auth);
DECLARE_string(client_token_file);
DECLARE_string(cluster_token_file);

DEFINE_int32(ps, 0,
             "local: parameter-server shards to start; 0: sized for this machine (2 with 4 "
             "or more cores, else 1); k8s: the TFJob's PS replicas (0: 1)");
DEFINE_int32(ps_replicas, 0,
             "local: hot-standby replicas per parameter-server shard, 0 or 1; with 1 each "
             "shard gets a backup process that takes over, with no step lost, when its "
             "primary dies (docs/design/replicas.md)");
DEFINE_int32(workers, 2,
             "local: workers to start; scale: the workers the running local cluster should "
             "have (required); k8s: the TFJob's Worker replicas");
DEFINE_bool(evaluator, true,
            "local: start an evaluator; k8s: an Evaluator replica (--noevaluator: none)");
DEFINE_bool(shm, true,
            "local: workers and parameter servers talk through shared-memory lanes (tensor "
            "bytes in shared memory, pushes and pulls over a Unix socket; --shm=false: over "
            "gRPC only, as between hosts)");
DEFINE_string(run_dir, "",
              "local: folder for the processes' logs (<role>-<index>.log) and ready files; "
              "default <checkpoint_root>/<model_dir>/logs with a job, else a new folder "
              "under $TMPDIR (or /tmp). scale: the run folder of the `pstrain local` to "
              "scale; default the one that runs");
DEFINE_string(bin_dir, "",
              "local: folder holding pstrain-coordinator, pstrain-ps, pstrain-worker and "
              "pstrain-evaluator; default next to this program or in its Bazel runfiles");
DEFINE_string(checkpoint_root, pstrain::kDefaultCheckpointRoot,
              "local: folder under which every job's model_dir must lie (given to the "
              "coordinator and the parameter servers); a relative model_dir is taken from "
              "it. A leading ~ is $HOME (or /tmp without one)");
DEFINE_double(job_timeout_secs, 0,
              "local: give up on a job that has not ended after this many seconds: the "
              "cluster is stopped, the job with it, and the exit code is 6; 0: wait as long "
              "as the job runs");
DEFINE_bool(keep_running, false,
            "local: keep the cluster up until Ctrl-C instead of stopping it at the end");
DEFINE_string(restart, "on-failure",
              "local: what happens to a process of the cluster that dies (killed, crashed, "
              "a non-zero exit), as a Kubernetes restartPolicy: on-failure starts it again "
              "with the same flags on the same addresses (the first restart at once, further "
              "ones after 1 s, 2 s, ... up to 30 s); never stops the cluster, naming it and "
              "showing the end of its log. A process that exits 0 was told to and is not "
              "restarted");
DEFINE_int32(max_restarts, 5,
             "local: with --restart=on-failure, the most restarts of one process within 10 "
             "minutes; when it dies once more the cluster stops, naming it, how it ended and "
             "the end of its log. 0: no restarts");

namespace pstrain {
namespace {

int DefaultParameterServers() { return std::thread::hardware_concurrency() >= 4 ? 2 : 1; }

std::string CheckpointRoot() { return ExpandCheckpointRoot(FLAGS_checkpoint_root); }

std::string ModelDirOf(const JobSpec& spec) {
  const std::string& model_dir = spec.checkpoint().model_dir();
  return absl::StartsWith(model_dir, "/") ? model_dir
                                          : absl::StrCat(CheckpointRoot(), "/", model_dir);
}

// Logs live beside the job's checkpoints, where a person looks after a run.
std::string ChooseRunDir(const std::optional<JobSpec>& spec) {
  if (!FLAGS_run_dir.empty()) return FLAGS_run_dir;
  if (spec.has_value()) return ModelDirOf(*spec) + "/logs";
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/pstrain-local-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

// Where the coordinator listens: the address other commands use, on
// loopback. "localhost" is written as 127.0.0.1 so it binds one address.
std::string ListenAddressFor(const CoordinatorAddress& address) {
  absl::StatusOr<HostPort> parsed = ParseHostPort(address.host_port);
  if (parsed.ok() && parsed->host == "localhost") {
    return absl::StrCat("127.0.0.1:", parsed->port);
  }
  return address.host_port;
}

void PrintTasks(const LocalCluster& cluster, std::ostream& out) {
  out << absl::StrFormat("  %-14s %-22s %-38s %-8s %s\n", "TASK", "GRPC", "METRICS", "PID",
                         "/metrics");
  for (const LocalTask& task : cluster.tasks()) {
    const std::string scheme = cluster.HttpSchemeOf(task);
    // Reading the page proves the scrape endpoint answers, not only that a
    // port was bound (HttpGet speaks plain HTTP only).
    std::string answer = "HTTPS";
    if (scheme == "http") {
      absl::StatusOr<std::string> page =
          HttpGet(task.metrics_address, "/metrics", absl::Seconds(5));
      answer =
          page.ok() ? absl::StrCat(page->size(), " bytes") : std::string(page.status().message());
    }
    out << absl::StrFormat("  %-14s %-22s %-38s %-8d %s\n", task.name(), task.grpc_address,
                           absl::StrCat(scheme, "://", task.metrics_address, "/metrics"), task.pid,
                           answer);
  }
  out << "  Prometheus scrape targets (file_sd): " << cluster.prometheus_targets_path() << "\n";
}

// Starts the cluster; when the coordinator's address is only the default
// and its port is taken (another local cluster), picks a free port instead
// of failing.
absl::StatusOr<std::unique_ptr<LocalCluster>> StartCluster(LocalClusterOptions options,
                                                           const CoordinatorAddress& address,
                                                           std::ostream& out) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
  if (cluster.ok() || !address.is_default()) return cluster;
  out << "The coordinator could not listen on " << options.coordinator_listen
      << " (another local cluster?); trying a free port.\n"
      << std::flush;
  options.coordinator_listen = "127.0.0.1:0";
  return LocalCluster::Start(options);
}

// Until Ctrl-C, or until a process of the cluster exits: after `pstrain
// shutdown` they all do, and a cluster missing a member is no use either.
// A process that dies meanwhile is restarted as `policy` allows.
// Scale requests are carried out meanwhile, when there is an `inbox`.
void WaitForCtrlCOrAnExit(LocalCluster& cluster, RestartPolicy& policy, ScaleInbox* inbox,
                          std::ostream& out) {
  ShutdownSignal signal;
  RealClock clock;
  StopSignal interrupted;
  std::thread supervisor([&] {
    std::optional<GivenUpTask> dead =
        SuperviseTasks(
            cluster, policy, clock, interrupted,
            [&](const std::string& line) { out << line << "\n" << std::flush; }, inbox);
    if (!dead.has_value()) return;
    out << dead->exit.task.name() << " exited with " << dead->exit.exit.ToString() << "; "
        << dead->why << "\n"
        << std::flush;
    signal.RequestShutdown();
  });
  signal.Wait();
  interrupted.Stop();
  supervisor.join();
}

// Where `pstrain scale` requests arrive; null, with a line saying why, when
// they cannot (another `pstrain local` runs in the same folder): the
// cluster works on without.
std::unique_ptr<ScaleInbox> OpenScaleInbox(const std::string& run_dir, std::ostream& out) {
  absl::StatusOr<std::unique_ptr<ScaleInbox>> inbox = ScaleInbox::Open(run_dir);
  if (inbox.ok()) return *std::move(inbox);
  out << "Scaling is off: " << inbox.status().message() << "\n" << std::flush;
  return nullptr;
}

// Why a process that died while the job ran stopped the cluster, with the
// end of its log.
void ReportDeadTask(const GivenUpTask& dead) {
  const LocalTask& task = dead.exit.task;
  std::cerr << "pstrain local: " << task.name() << " (pid " << task.pid << ") exited with "
            << dead.exit.exit.ToString() << " while the job ran; " << dead.why
            << "; stopping the cluster.\n--- end of " << task.log_path << " ---\n"
            << TailOfFile(task.log_path, 15) << "\n---\n";
}

// What the arguments and the flags of the cluster's size and restarts get
// wrong, or the restart policy they ask for.
absl::StatusOr<RestartPolicyOptions> RestartsFromFlags(const std::vector<std::string>& args) {
  if (args.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", args[1],
                     "'; one job spec at most, settings are --flags (see pstrain local --help)"));
  }
  if (FLAGS_ps < 0 || FLAGS_workers < 1 || !(FLAGS_job_timeout_secs >= 0) ||
      FLAGS_max_restarts < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ps must be >= 0, --workers >= 1, --job_timeout_secs >= 0 and --max_restarts >= 0; got ",
        FLAGS_ps, ", ", FLAGS_workers, ", ", FLAGS_job_timeout_secs, ", ", FLAGS_max_restarts));
  }
  if (FLAGS_ps_replicas < 0 || FLAGS_ps_replicas > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ps_replicas must be 0 or 1, got ", FLAGS_ps_replicas));
  }
  absl::StatusOr<RestartMode> mode = ParseRestartMode(FLAGS_restart);
  if (!mode.ok()) return mode.status();
  RestartPolicyOptions restarts;
  restarts.mode = *mode;
  restarts.max_restarts = FLAGS_max_restarts;
  return restarts;
}

// The cluster the flags ask for; its run folder chosen for `spec` (empty
// when none could be made).
LocalClusterOptions ClusterOptionsFromFlags(const CoordinatorAddress& address,
                                            const std::optional<JobSpec>& spec) {
  LocalClusterOptions options;
  options.num_ps = FLAGS_ps > 0 ? FLAGS_ps : DefaultParameterServers();
  options.ps_replicas = FLAGS_ps_replicas;
  options.num_workers = FLAGS_workers;
  options.evaluator = FLAGS_evaluator;
  options.shared_memory = FLAGS_shm;
  options.bin_dir = FLAGS_bin_dir;
  options.checkpoint_root = CheckpointRoot();
  options.coordinator_listen = ListenAddressFor(address);
  options.tls_cert = FLAGS_tls_cert;
  options.tls_key = FLAGS_tls_key;
  options.tls_ca = FLAGS_tls_ca;
  options.tls_require_client_cert = FLAGS_tls_client_auth == "require";
  options.client_token_file = FLAGS_client_token_file;
  options.cluster_token_file = FLAGS_cluster_token_file;
  options.run_dir = ChooseRunDir(spec);
  return options;
}

void PrintStarting(const LocalClusterOptions& options, bool scalable, std::ostream& out) {
  out << "Starting a local pstrain cluster: 1 coordinator, " << options.num_ps
      << " parameter server(s)" << (options.ps_replicas > 0 ? " each with a hot-standby backup" : "")
      << ", " << options.num_workers << " worker(s)"
      << (options.evaluator ? ", 1 evaluator" : "") << "\n  logs in " << options.run_dir << "\n";
  if (scalable) {
    out << "  add or remove workers meanwhile: pstrain scale --workers=N --run_dir="
        << options.run_dir << "\n";
  }
  out << std::flush;
}

void PrintHealthy(LocalCluster& cluster, const CoordinatorAddress& address, std::ostream& out) {
  const std::string coordinator = cluster.coordinator().grpc_address;
  out << "Every process answers its health check (SERVING).\n"
      << "The coordinator is at " << coordinator;
  if (ListenAddressFor(address) != coordinator) {
    out << "; other commands need --coordinator_address=" << coordinator
        << " (or PSTRAIN_COORDINATOR=" << coordinator << ")";
  }
  out << ".\n"
      << "Console: " << cluster.console_url() << " (the jobs, each job's live plots, the members)\n"
      << std::flush;
}

// Says how the job ended; the exit code.
int ReportOutcome(const LocalJobOutcome& outcome, bool json, std::ostream& out) {
  if (outcome.dead_task.has_value()) {
    ReportDeadTask(*outcome.dead_task);
    return kExitJobFailed;
  }
  if (!outcome.final_status.ok()) {
    std::cerr << "pstrain local: " << outcome.final_status.status().message() << "\n";
    // A refused spec, a job refused as things stand (its model_dir holds a
    // finished run) and a wait that ran out say so; whatever else ended the
    // run, the job did not finish.
    const ExitCode code = ExitCodeForWait(outcome.final_status.status());
    return code == kExitUsage || code == kExitWrongState || code == kExitGaveUpWaiting
               ? code
               : kExitJobFailed;
  }
  out << FormatFinalStatus(*outcome.final_status) << "\n" << std::flush;
  if (json) std::cout << JobStatusJson(*outcome.final_status) << "\n" << std::flush;
  return ExitCodeForJobState(outcome.final_status->state());
}

// The job of `args` (none when empty), checked, with --model_dir applied.
absl::StatusOr<std::optional<JobSpec>> JobOfArgs(const std::vector<std::string>& args) {
  if (args.empty()) return std::nullopt;
  absl::StatusOr<JobSpec> loaded = LoadCheckedJobSpec(args.front());
  if (!loaded.ok()) return loaded.status();
  ApplyModelDirFlag(*loaded);
  return *std::move(loaded);
}

int RunLocal(const std::vector<std::string>& args) {
  absl::StatusOr<OutputOptions> output = OutputOptionsFromFlags();
  absl::StatusOr<CoordinatorAddress> address = CoordinatorAddressFromFlags(AddressUse::kListen);
  absl::StatusOr<RestartPolicyOptions> restarts = RestartsFromFlags(args);
  for (const absl::Status& status : {output.status(), address.status(), restarts.status()}) {
    if (!status.ok()) {
      std::cerr << "pstrain local: " << status.message() << "\n";
      return kExitUsage;
    }
  }
  RealClock clock;
  SeededRandom random;
  RestartPolicy policy(*restarts, clock, random);
  // The spec is read and checked before anything starts.
  absl::StatusOr<std::optional<JobSpec>> job = JobOfArgs(args);
  if (!job.ok()) {
    std::cerr << "pstrain local: " << job.status().message() << "\n";
    return kExitUsage;
  }
  const std::optional<JobSpec>& spec = *job;
  // With --output=json stdout carries one JSON object; what people read
  // goes to stderr.
  const bool json = output->format == OutputFormat::kJson;
  std::ostream& out = json ? std::cerr : std::cout;
  OutputOptions progress = *output;
  if (json) progress = OutputOptions{OutputFormat::kText, ProgressStyle::kPlainLines};

  LocalClusterOptions options = ClusterOptionsFromFlags(*address, spec);
  if (options.run_dir.empty()) {
    std::cerr << "pstrain local: cannot create a run folder under $TMPDIR; pass --run_dir\n";
    return kExitJobFailed;
  }
  // Ctrl-C must reach this process as a wait, not kill it before it has
  // stopped its children.
  BlockShutdownSignals();

  // Scaling works while the cluster is supervised: during a job, or
  // with --keep_running.
  const bool scalable = spec.has_value() || FLAGS_keep_running;
  PrintStarting(options, scalable, out);
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = StartCluster(options, *address, out);
  if (!cluster.ok()) {
    std::cerr << "pstrain local: " << cluster.status().message() << "\n";
    return ExitCodeForStatus(cluster.status()) == kExitUsage ? kExitUsage : kExitJobFailed;
  }
  PrintTasks(**cluster, out);
  std::unique_ptr<ScaleInbox> inbox = scalable ? OpenScaleInbox(options.run_dir, out) : nullptr;
  if (absl::Status healthy = (*cluster)->CheckHealthy(); !healthy.ok()) {
    std::cerr << "pstrain local: " << healthy.message() << "\n";
    return kExitJobFailed;
  }
  PrintHealthy(**cluster, *address, out);

  int exit_code = kExitSuccess;
  if (spec.has_value()) {
    const absl::Duration job_timeout = FLAGS_job_timeout_secs > 0
                                           ? absl::Seconds(FLAGS_job_timeout_secs)
                                           : absl::InfiniteDuration();
    exit_code = ReportOutcome(
        RunJobOnLocalCluster(**cluster, *spec, job_timeout, policy, out, progress, inbox.get()),
        json, out);
  }

  if (FLAGS_keep_running && exit_code == kExitSuccess) {
    out << "Running; press Ctrl-C to stop.\n" << std::flush;
    WaitForCtrlCOrAnExit(**cluster, policy, inbox.get(), out);
  }
  inbox.reset();  // a scale request from now on is told the cluster ended
  out << "Stopping the cluster...\n" << std::flush;
  absl::Status stopped = (*cluster)->Stop(absl::Seconds(15));
  if (!stopped.ok()) {
    std::cerr << "pstrain local: " << stopped.message() << "\n";
    return kExitJobFailed;
  }
  out << "Every process exited cleanly (exit code 0).\n" << std::flush;
  return exit_code;
}

}  // namespace

Subcommand LocalCommand() {
  return {"local",
          "[JOB.pbtxt]",
          "run a whole cluster on this machine; with a job, train it and print its metrics",
          "Starts a coordinator, parameter servers, workers and an evaluator as processes\n"
          "on loopback and checks that each one is healthy. With a job spec: submits it,\n"
          "shows its progress (a live bar on a terminal), checkpoints and evaluations,\n"
          "prints the final metrics, then stops every process. Ctrl-C stops the job after\n"
          "a final checkpoint (again: at once), then the processes. No process is left\n"
          "behind. Each process logs to <run_dir>/<role>-<index>.log.\n"
          "\n"
          "A process that dies (killed, crashed) is started again with the same flags on\n"
          "the same addresses, as Kubernetes' restartPolicy OnFailure does, and the job\n"
          "carries on: a worker or the evaluator rejoins and its lease is handed back, a\n"
          "parameter server brings every shard back to the newest checkpoint, a\n"
          "coordinator resumes the job from its journal. Each restart prints a line (the\n"
          "task, how it ended, the restart's number, its log, which keeps the earlier\n"
          "run above a marker). The first restart of a process comes at once, further\n"
          "ones after 1 s, 2 s, 4 s, ... up to 30 s; a process restarted --max_restarts\n"
          "times (default 5) within 10 minutes that dies again stops the cluster, naming\n"
          "it, how it ended and the end of its log. --restart=never: the first process\n"
          "that dies stops the cluster that way.\n"
          "\n"
          "While it runs a job (or --keep_running), `pstrain scale --workers=N` from\n"
          "another terminal adds or removes workers (the command is printed at start);\n"
          "each change prints a line. The parameter servers stay as started.\n"
          "\n"
          "The coordinator listens on --coordinator_address / $PSTRAIN_COORDINATOR, default\n"
          "localhost:7070 (a free port when that one is taken), so `pstrain status`,\n"
          "`watch`, `list` and the rest find it from another terminal.\n"
          "Exit codes: 0 the job succeeded (or, without a job, the cluster came up and\n"
          "stopped cleanly), 1 the job failed or was stopped or a process died and was\n"
          "not restarted, 2 bad usage or an invalid spec, 6 --job_timeout_secs ran out\n"
          "(the cluster is stopped, the job with it), 7 the job's model_dir holds a\n"
          "finished run (--model_dir=DIR trains it afresh in another folder). With --output=json stdout holds one\n"
          "JSON object (state, global_step, examples_per_sec, each final eval metric by\n"
          "name); the rest goes to stderr.\n"
          "\n"
          "Examples:\n"
          "  pstrain local examples/fashion_mnist_mlp.pbtxt\n"
          "  pstrain local examples/fashion_mnist_mlp.pbtxt --ps 2 --workers 3 --output=json\n"
          "  pstrain local examples/fashion_mnist_mlp.pbtxt --ps_replicas=1  # a backup per shard\n"
          "  pstrain local --keep_running        # an idle cluster until Ctrl-C",
          {"ps",           "ps_replicas",     "workers",           "evaluator",
           "shm",          "run_dir",         "bin_dir",           "checkpoint_root",
           "model_dir",    "job_timeout_secs",
           "keep_running", "restart",         "max_restarts",      "coordinator_address",
           "output",       "progress",        "tls_cert",          "tls_key",
           "tls_ca",       "tls_client_auth", "client_token_file", "cluster_token_file"},
          RunLocal};
}

}  // namespace pstrain
