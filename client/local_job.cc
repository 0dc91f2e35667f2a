#include "client/local_job.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "client/job_follower.h"
#include "client/job_service_client.h"
#include "common/daemon/shutdown_signal.h"

namespace pstrain {
namespace {

// How often the cluster's processes are checked while a job runs: a dead
// one is reported within this, at the cost of a waitpid per process.
constexpr absl::Duration kProcessCheckInterval = absl::Milliseconds(250);

}  // namespace

LocalJobOutcome RunJobOnLocalCluster(LocalCluster& cluster, const JobSpec& spec,
                                     absl::Duration timeout, std::ostream& out,
                                     OutputOptions progress) {
  LocalJobOutcome outcome;
  JobServiceClient client(cluster.coordinator().grpc_address, absl::Seconds(30),
                          cluster.client_security());
  SubmitJobRequest request;
  *request.mutable_spec() = spec;
  absl::StatusOr<SubmitJobResponse> submitted = client.Submit(request);
  if (!submitted.ok()) {
    outcome.final_status = submitted.status();
    return outcome;
  }
  const std::string job_id = submitted->job_id();
  out << "submitted job " << job_id << "\n" << std::flush;

  JobFollower follower(client, out, progress);
  absl::Notification job_over;

  // Ctrl-C stops the job the graceful way; the follower then sees its final
  // checkpoint and evaluation through to the end.
  ShutdownSignal interrupt;
  std::thread stopper([&] {
    for (int signals = 0; signals < 2; ++signals) {
      if (interrupt.Wait() == 0) return;  // the job ended on its own
      const bool immediately = signals == 1;
      follower.Announce(immediately
                            ? absl::StrCat("stopping job ", job_id, " now, without a final checkpoint")
                            : absl::StrCat("stopping job ", job_id,
                                           " (final checkpoint first; Ctrl-C again: at once)..."));
      absl::StatusOr<JobStatus> stopped = client.Stop(job_id, immediately);
      if (!stopped.ok()) follower.Announce(absl::StrCat("stop failed: ", stopped.status().message()));
    }
  });

  // The cluster's processes all run until Stop: one that ends now has died.
  std::optional<TaskExit> dead;
  std::thread watchdog([&] {
    while (!job_over.WaitForNotificationWithTimeout(kProcessCheckInterval)) {
      if (std::optional<TaskExit> exit = cluster.FirstExitedTask()) {
        dead = std::move(exit);
        follower.Cancel(absl::StrCat(dead->task.name(), " exited while the job ran"));
        return;
      }
    }
  });

  outcome.final_status = follower.Follow(job_id, timeout);
  job_over.Notify();
  interrupt.RequestShutdown();
  stopper.join();
  watchdog.join();
  outcome.dead_task = std::move(dead);
  return outcome;
}

}  // namespace pstrain
