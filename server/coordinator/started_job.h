#ifndef PSTRAIN_SERVER_COORDINATOR_STARTED_JOB_H_
#define PSTRAIN_SERVER_COORDINATOR_STARTED_JOB_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "common/job/stop_conditions.h"
#include "common/job/train_summaries.h"
#include "protos/cluster.pb.h"
#include "server/coordinator/data_lease_manager.h"
#include "server/coordinator/global_step.h"

namespace pstrain {
namespace coordinator {

// What a job runs with once it has started, which cluster calls use: made
// by the start phase (job_start.h) on the job's Run thread while the job is
// starting, published with the move from JobPhase::kStarting to kTraining
// (JobControl::Start), and never replaced. A cluster call gets it from its
// admission (job_phase.h refuses the calls that use it while the job is
// starting), so none can see a part before it exists; a job stopped while
// starting finishes without it. Each part is thread-safe.
struct StartedJob {
  // The job runs on tasks ps/0 .. ps/(num_ps - 1) and started on workers
  // worker/0 .. worker/(num_workers - 1).
  int num_ps = 0;
  int num_workers = 0;
  // Workers join it as ranks below this (JobWorkers); num_workers when
  // the count is fixed (sync_slots).
  int max_workers = 0;
  // Its sync rounds have a slot per worker rank (RoundsHaveWorkerSlots):
  // data leases go to the slots (DataLeaseOptions::sync_slots), and the
  // global step follows the rounds' parameter version.
  bool sync_slots = false;
  // train_data.epochs.
  int epochs = 0;
  // Every job: its stop decision and best evaluation.
  std::unique_ptr<StopConditions> stop;
  // Training jobs only; null otherwise.
  std::unique_ptr<DataLeaseManager> data;
  std::unique_ptr<GlobalStep> step;
  // Null also when the summaries could not be opened.
  std::unique_ptr<TrainSummaries> train_summaries;

  // Whether `task` may be one of the job's workers.
  bool IsWorker(const TaskId& task) const {
    return task.type() == TASK_TYPE_WORKER && task.index() >= 0 && task.index() < max_workers;
  }

  // A training job at global step `step`: decides END_OF_DATA once every
  // record of the last epoch is finished, or once the sync rounds the
  // epochs fill are trained. Returns the decision that stands.
  std::optional<StopDecision> CheckEndOfData(int64_t step) const;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_STARTED_JOB_H_
