#include "client/local_job.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "client/job_follower.h"
#include "client/job_service_client.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "common/daemon/shutdown_signal.h"

namespace pstrain {
namespace {

// How long the job is followed through a coordinator that went away, when
// it may be restarted: it is back within seconds, but its resumption waits
// for every member to register again.
constexpr absl::Duration kCoordinatorRestartWindow = absl::Minutes(2);

}  // namespace

LocalJobOutcome RunJobOnLocalCluster(LocalCluster& cluster, const JobSpec& spec,
                                     absl::Duration timeout, RestartPolicy& policy,
                                     std::ostream& out, OutputOptions progress,
                                     ScaleInbox* inbox) {
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

  // Ctrl-C stops the job the graceful way; the follower then sees its final
  // checkpoint and evaluation through to the end.
  ShutdownSignal interrupt;
  std::thread stopper([&] {
    for (int signals = 0; signals < 2; ++signals) {
      if (interrupt.Wait() == 0) return;  // the job ended on its own
      const bool immediately = signals == 1;
      follower.Announce(
          immediately ? absl::StrCat("stopping job ", job_id, " now, without a final checkpoint")
                      : absl::StrCat("stopping job ", job_id,
                                     " (final checkpoint first; Ctrl-C again: at once)..."));
      absl::StatusOr<JobStatus> stopped = client.Stop(job_id, immediately);
      if (!stopped.ok())
        follower.Announce(absl::StrCat("stop failed: ", stopped.status().message()));
    }
  });

  // The cluster's processes all run until Stop: one that ends now has died.
  RealClock clock;
  StopSignal job_over;
  std::optional<GivenUpTask> dead;
  std::thread supervisor([&] {
    dead = SuperviseTasks(cluster, policy, clock, job_over,
                          [&](const std::string& line) { follower.Announce(line); }, inbox);
    if (dead.has_value()) {
      follower.Cancel(absl::StrCat(dead->exit.task.name(), " exited while the job ran"));
    }
  });

  const bool coordinator_restarts =
      policy.options().mode == RestartMode::kOnFailure && policy.options().max_restarts > 0;
  outcome.final_status = follower.Follow(
      job_id, timeout, coordinator_restarts ? kCoordinatorRestartWindow : absl::ZeroDuration());
  job_over.Stop();
  interrupt.RequestShutdown();
  stopper.join();
  supervisor.join();
  outcome.dead_task = std::move(dead);
  return outcome;
}

}  // namespace pstrain
