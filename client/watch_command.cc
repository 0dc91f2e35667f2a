#include "client/watch_command.h"

#include <iostream>

#include "client/exit_code.h"
#include "client/job_follower.h"
#include "client/job_json.h"
#include "client/job_text.h"
#include "client/remote_command.h"
#include "gflags/gflags.h"

DEFINE_double(watch_timeout_secs, 7 * 24 * 3600,
              "watch: give up following a job that has not ended after this long (exit code "
              "6; the job goes on)");
DEFINE_double(reconnect_secs, 300,
              "watch: when the coordinator goes away, wait this long for it to come back (a "
              "restarted coordinator resumes its running job) before giving up; 0 gives up at "
              "once");

namespace pstrain {
namespace {

int RunWatch(const std::vector<std::string>& args) {
  std::optional<std::string> job_id = OneJobIdArgument("watch", args);
  if (!job_id) return kExitUsage;
  if (!(FLAGS_watch_timeout_secs > 0)) {
    std::cerr << "pstrain watch: --watch_timeout_secs must be > 0, got " << FLAGS_watch_timeout_secs
              << "\n";
    return kExitUsage;
  }
  if (!(FLAGS_reconnect_secs >= 0)) {
    std::cerr << "pstrain watch: --reconnect_secs must be >= 0, got " << FLAGS_reconnect_secs
              << "\n";
    return kExitUsage;
  }
  int exit_code = kExitSuccess;
  std::optional<RemoteCommand> remote = SetUpRemoteCommand("watch", &exit_code);
  if (!remote) return exit_code;
  JobFollower follower(*remote->client, std::cout, remote->output);
  absl::StatusOr<JobStatus> final_status = follower.Follow(
      *job_id, absl::Seconds(FLAGS_watch_timeout_secs), absl::Seconds(FLAGS_reconnect_secs));
  if (!final_status.ok()) {
    ReportFailure("watch", final_status.status());
    return ExitCodeForWait(final_status.status());
  }
  std::cout << (remote->output.format == OutputFormat::kJson ? JobStatusJson(*final_status)
                                                             : FormatFinalStatus(*final_status))
            << "\n";
  return ExitCodeForJobState(final_status->state());
}

}  // namespace

Subcommand WatchCommand() {
  return {"watch",
          "JOB",
          "follow a job live until it ends: progress, checkpoints, evaluations",
          "Streams the job's progress (a live bar on a terminal, a line every few seconds\n"
          "otherwise or with --no-progress), each checkpoint and evaluation, and state\n"
          "changes, until the job ends; then prints its final status. When the\n"
          "coordinator restarts meanwhile, it waits for it (--reconnect_secs) and follows\n"
          "the resumed job on. Ctrl-C stops watching, not the job (`pstrain stop JOB`\n"
          "does that). With --output=json: one JSON object per event, then the final\n"
          "status as one object.\n"
          "Exit codes: 0 the job succeeded, 1 it failed or was stopped, 6 it still ran\n"
          "when --watch_timeout_secs ran out (the job goes on).\n"
          "\n"
          "Example:\n"
          "  pstrain watch fashion-mnist-mlp-1",
          RemoteCommandFlags({"output", "progress", "watch_timeout_secs", "reconnect_secs"}),
          RunWatch};
}

}  // namespace pstrain
