#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_PARTS_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_PARTS_H_

#include <memory>

#include "common/job/stop_conditions.h"
#include "common/job/train_summaries.h"
#include "server/coordinator/data_lease_manager.h"
#include "server/coordinator/global_step.h"

namespace pstrain {
namespace coordinator {

// What a job runs with once it has started, which cluster calls use: made
// by JobRunner::Prepare on the job's Run thread while the job is starting,
// published with the move from JobPhase::kStarting to kTraining, and never
// replaced. A cluster call gets it from its admission (job_phase.h refuses
// the calls that use it while the job is starting), so none can see a part
// before it exists; a job stopped while starting finishes without it. Each
// part is thread-safe.
struct JobParts {
  // The job runs on tasks ps/0 .. ps/(num_ps - 1) and likewise workers.
  int num_ps = 0;
  int num_workers = 0;
  // Every job: its stop decision and best evaluation.
  std::unique_ptr<StopConditions> stop;
  // Training jobs only; null otherwise.
  std::unique_ptr<DataLeaseManager> data;
  std::unique_ptr<GlobalStep> step;
  // Null also when the summaries could not be opened.
  std::unique_ptr<TrainSummaries> train_summaries;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_PARTS_H_
