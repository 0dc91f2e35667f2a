#ifndef PSTRAIN_CLIENT_LOCAL_JOB_H_
#define PSTRAIN_CLIENT_LOCAL_JOB_H_

#include <optional>
#include <ostream>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/local_cluster.h"
#include "client/output_options.h"
#include "client/restart_policy.h"
#include "client/scale_inbox.h"
#include "client/task_supervisor.h"
#include "protos/job.pb.h"

namespace pstrain {

struct LocalJobOutcome {
  // The job's final status, or why it could not be followed to its end.
  absl::StatusOr<JobStatus> final_status;
  // Set when a process of the cluster ended while the job ran and `policy`
  // did not start it again; following stopped at once (final_status is then
  // Cancelled).
  std::optional<GivenUpTask> dead_task;
};

// Submits `spec` to `cluster`'s coordinator and follows the job to its end,
// printing its events to `out` as `progress` says. Meanwhile:
//   - Ctrl-C (SIGINT) or SIGTERM stops the job gracefully (final checkpoint
//     first) and keeps following it; a second one stops it immediately.
//     The caller must have blocked those signals (BlockShutdownSignals).
//   - a process of the cluster that ends is started again as `policy`
//     allows, with a line saying so (SuperviseTasks); the job carries on
//     (a worker or the evaluator rejoins, a parameter server brings a
//     rollback to the newest checkpoint, a coordinator resumes the job from
//     its journal). One the policy does not restart ends the wait at once,
//     so a crash is reported in seconds instead of after a timeout.
//   - with an `inbox`, scale requests (`pstrain scale`) are carried out as
//     they come (SuperviseTasks).
// InvalidArgument in final_status: the coordinator refused the spec.
// DeadlineExceeded: the job did not end within `timeout`.
LocalJobOutcome RunJobOnLocalCluster(LocalCluster& cluster, const JobSpec& spec,
                                     absl::Duration timeout, RestartPolicy& policy,
                                     std::ostream& out, OutputOptions progress,
                                     ScaleInbox* inbox = nullptr);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_LOCAL_JOB_H_
