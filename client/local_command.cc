#include "client/local_command.h"

#include <signal.h>
#include <stdlib.h>

#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/job_runner_client.h"
#include "client/local_cluster.h"
#include "common/config/job_spec_parser.h"
#include "common/daemon/shutdown_signal.h"
#include "common/net/http_get.h"
#include "gflags/gflags.h"

DEFINE_int32(num_ps, 1, "local: parameter-server shards to start");
DEFINE_int32(num_workers, 2, "local: workers to start");
DEFINE_bool(evaluator, true, "local: start an evaluator");
DEFINE_string(run_dir, "",
              "local: folder for the processes' logs and ready files; default a new "
              "folder under $TMPDIR (or /tmp)");
DEFINE_string(bin_dir, "",
              "local: folder holding pstrain-coordinator, pstrain-ps, pstrain-worker and "
              "pstrain-evaluator; default next to this program or in its Bazel runfiles");
DEFINE_string(checkpoint_root, "/tmp/pstrain",
              "local: folder under which every job's model_dir must lie (given to the "
              "coordinator and the parameter servers)");
DEFINE_double(job_timeout_secs, 3600, "local: give up on a job that has not ended after this");
DEFINE_bool(keep_running, false,
            "local: keep the cluster up until Ctrl-C instead of stopping it once healthy");

namespace pstrain {
namespace {

std::string MakeRunDir() {
  if (!FLAGS_run_dir.empty()) return FLAGS_run_dir;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/pstrain-local-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

void PrintTasks(const LocalCluster& cluster) {
  std::cout << absl::StrFormat("  %-14s %-22s %-38s %-8s %s\n", "TASK", "GRPC", "METRICS", "PID",
                               "/metrics");
  for (const LocalTask& task : cluster.tasks()) {
    // Reading the page proves the scrape endpoint answers, not only that a
    // port was bound.
    absl::StatusOr<std::string> page = HttpGet(task.metrics_address, "/metrics", absl::Seconds(5));
    std::cout << absl::StrFormat(
        "  %-14s %-22s %-38s %-8d %s\n", task.name(), task.grpc_address,
        absl::StrCat("http://", task.metrics_address, "/metrics"), task.pid,
        page.ok() ? absl::StrCat(page->size(), " bytes") : std::string(page.status().message()));
  }
}

}  // namespace

int RunLocalCommand(const std::vector<std::string>& args) {
  if (args.size() > 1) {
    std::cerr << "pstrain local: unexpected argument '" << args[1]
              << "'; one job spec at most, settings are --flags (see pstrain --help)\n";
    return 2;
  }
  // The spec is read (and its syntax checked) before anything starts.
  std::optional<JobSpec> spec;
  if (!args.empty()) {
    absl::StatusOr<JobSpec> loaded = LoadJobSpecFile(args.front());
    if (!loaded.ok()) {
      std::cerr << "pstrain local: " << loaded.status().message() << "\n";
      return 2;
    }
    spec = *std::move(loaded);
  }
  LocalClusterOptions options;
  options.num_ps = FLAGS_num_ps;
  options.num_workers = FLAGS_num_workers;
  options.evaluator = FLAGS_evaluator;
  options.bin_dir = FLAGS_bin_dir;
  options.checkpoint_root = FLAGS_checkpoint_root;
  options.run_dir = MakeRunDir();
  if (options.run_dir.empty()) {
    std::cerr << "pstrain local: cannot create a run folder under $TMPDIR; pass --run_dir\n";
    return 1;
  }
  // Ctrl-C must reach this process as a wait, not kill it before it has
  // stopped its children.
  BlockShutdownSignals();

  std::cout << "Starting a local pstrain cluster: 1 coordinator, " << options.num_ps
            << " parameter server(s), " << options.num_workers << " worker(s)"
            << (options.evaluator ? ", 1 evaluator" : "") << "\n  logs in " << options.run_dir
            << "\n"
            << std::flush;
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
  if (!cluster.ok()) {
    std::cerr << "pstrain local: " << cluster.status().message() << "\n";
    return 1;
  }
  PrintTasks(**cluster);
  absl::Status healthy = (*cluster)->CheckHealthy();
  if (!healthy.ok()) {
    std::cerr << "pstrain local: " << healthy.message() << "\n";
    return 1;
  }
  std::cout << "Every process answers its health check (SERVING).\n";

  int exit_code = 0;
  if (spec.has_value()) {
    absl::StatusOr<JobStatus> final_status =
        RunJobAndFollow((*cluster)->coordinator().grpc_address, *spec,
                        absl::Seconds(FLAGS_job_timeout_secs), std::cout);
    if (!final_status.ok()) {
      std::cerr << "pstrain local: " << final_status.status().message() << "\n";
      exit_code = final_status.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
    } else {
      std::cout << FormatFinalStatus(*final_status) << "\n";
      if (final_status->state() != JOB_STATE_SUCCEEDED) exit_code = 1;
    }
  }

  if (FLAGS_keep_running) {
    std::cout << "Running; press Ctrl-C to stop.\n" << std::flush;
    ShutdownSignal().Wait();
  }
  std::cout << "Stopping the cluster...\n" << std::flush;
  absl::Status stopped = (*cluster)->Stop(absl::Seconds(15));
  if (!stopped.ok()) {
    std::cerr << "pstrain local: " << stopped.message() << "\n";
    return 1;
  }
  std::cout << "Every process exited cleanly (exit code 0).\n";
  return exit_code;
}

}  // namespace pstrain
