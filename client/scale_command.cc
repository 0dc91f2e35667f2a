#include "client/scale_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "client/exit_code.h"
#include "client/scale_inbox.h"
#include "client/scale_request.h"
#include "gflags/gflags.h"

// Defined in local_command.cc: `pstrain local` starts --workers workers in
// --run_dir; `pstrain scale` asks it for --workers in --run_dir.
DECLARE_int32(workers);
DECLARE_string(run_dir);

DEFINE_double(grace_secs, 30,
              "scale: how long a worker removed gets from SIGTERM to exit (it hands its data "
              "lease back and leaves) before SIGKILL, as Kubernetes' "
              "terminationGracePeriodSeconds");
DEFINE_double(scale_timeout_secs, 300,
              "scale: give up waiting for the answer of `pstrain local` after this many seconds "
              "(exit code 3)");

namespace pstrain {
namespace {

int RunScale(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::cerr << "pstrain scale: takes no arguments, got '" << args[0]
              << "'; the number of workers is --workers=N\n";
    return kExitUsage;
  }
  gflags::CommandLineFlagInfo workers_flag;
  if (!gflags::GetCommandLineFlagInfo("workers", &workers_flag) || workers_flag.is_default) {
    std::cerr << "pstrain scale: say how many workers the cluster should have: --workers=N\n";
    return kExitUsage;
  }
  ScaleRequest request;
  request.workers = FLAGS_workers;
  request.grace = absl::Seconds(FLAGS_grace_secs);
  absl::Status checked = CheckScaleRequest(request);
  if (checked.ok() && !(FLAGS_scale_timeout_secs > 0)) {
    checked = absl::InvalidArgumentError(
        absl::StrCat("--scale_timeout_secs must be > 0, got ", FLAGS_scale_timeout_secs));
  }
  if (!checked.ok()) {
    std::cerr << "pstrain scale: " << checked.message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<std::string> run_dir = FLAGS_run_dir.empty()
                                            ? FindRunningLocalCluster()
                                            : absl::StatusOr<std::string>(FLAGS_run_dir);
  if (!run_dir.ok()) {
    std::cerr << "pstrain scale: " << run_dir.status().message() << "\n";
    return kExitUnreachable;
  }
  absl::StatusOr<ScaleAnswer> answer =
      SendScaleRequest(*run_dir, request, absl::Seconds(FLAGS_scale_timeout_secs));
  if (!answer.ok()) {
    std::cerr << "pstrain scale: " << answer.status().message() << "\n";
    return answer.status().code() == absl::StatusCode::kDataLoss ? kExitInternal : kExitUnreachable;
  }
  for (const std::string& change : answer->changes) std::cout << change << "\n";
  if (!answer->result.ok()) {
    std::cerr << "pstrain scale: " << answer->result.message() << "; the cluster has "
              << answer->workers << " worker(s)\n";
    const ExitCode code = ExitCodeForStatus(answer->result);
    return code == kExitWrongState || code == kExitUsage ? code : kExitInternal;
  }
  std::cout << "the local cluster in " << *run_dir << " has " << answer->workers << " worker(s)\n";
  return kExitSuccess;
}

}  // namespace

Subcommand ScaleCommand() {
  return {"scale",
          "--workers=N",
          "add or remove workers of a running `pstrain local`",
          "Asks the `pstrain local` that runs a job (or --keep_running) to have N workers,\n"
          "and prints each change as it answers. It adds workers one at a time, each the\n"
          "next worker index, with the flags of the others, on fresh loopback ports, its\n"
          "log <run_dir>/worker-<index>.log; it removes the worker with the highest index\n"
          "first, as a Kubernetes StatefulSet scales down: SIGTERM, after which a worker\n"
          "hands its data lease back and leaves, then SIGKILL if it still runs after\n"
          "--grace_secs. A worker removed so is not restarted. Whether a running job trains\n"
          "on an added worker is the job's to say: a sync job whose rounds take every\n"
          "worker (replicas_to_aggregate 0) takes the change at a round boundary, from a\n"
          "checkpoint of it with its rounds dealt again.\n"
          "\n"
          "The number of parameter servers cannot change under a running cluster: every\n"
          "variable and checkpoint is sharded over the ones it started with. For another\n"
          "number, stop the cluster and start a new one (`pstrain local --ps=N`); the job\n"
          "resumes from its newest checkpoint.\n"
          "\n"
          "The request goes through the cluster's run folder (--run_dir, printed by\n"
          "`pstrain local` at start); without it, the one `pstrain local` of this user that\n"
          "runs is found, and several are refused. Exit codes: 0 the cluster has N workers,\n"
          "2 bad usage (N below 1 or above 64), 3 no `pstrain local` runs there (or it did\n"
          "not answer within --scale_timeout_secs), 7 the cluster refused (one whose\n"
          "tasks are placed on hosts cannot scale), 8 a worker did not start or stop\n"
          "(the message says why; the changes made before it stay).\n"
          "\n"
          "Examples:\n"
          "  pstrain scale --workers=3\n"
          "  pstrain scale --workers=1 --run_dir=$HOME/pstrain/my-job/logs --grace_secs=10",
          {"workers", "run_dir", "grace_secs", "scale_timeout_secs"},
          RunScale};
}

}  // namespace pstrain
