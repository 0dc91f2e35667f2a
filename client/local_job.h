#ifndef PSTRAIN_CLIENT_LOCAL_JOB_H_
#define PSTRAIN_CLIENT_LOCAL_JOB_H_

#include <optional>
#include <ostream>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/local_cluster.h"
#include "client/output_options.h"
#include "protos/job.pb.h"

namespace pstrain {

struct LocalJobOutcome {
  // The job's final status, or why it could not be followed to its end.
  absl::StatusOr<JobStatus> final_status;
  // Set when a process of the cluster died while the job ran; following
  // stopped at once (final_status is then Cancelled).
  std::optional<TaskExit> dead_task;
};

// Submits `spec` to `cluster`'s coordinator and follows the job to its end,
// printing its events to `out` as `progress` says. Meanwhile:
//   - Ctrl-C (SIGINT) or SIGTERM stops the job gracefully (final checkpoint
//     first) and keeps following it; a second one stops it immediately.
//     The caller must have blocked those signals (BlockShutdownSignals).
//   - a process of the cluster that exits ends the wait at once, so a
//     crashed worker is reported in seconds instead of after a timeout.
// InvalidArgument in final_status: the coordinator refused the spec.
// DeadlineExceeded: the job did not end within `timeout`.
LocalJobOutcome RunJobOnLocalCluster(LocalCluster& cluster, const JobSpec& spec,
                                     absl::Duration timeout, std::ostream& out,
                                     OutputOptions progress);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_LOCAL_JOB_H_
