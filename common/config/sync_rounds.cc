#include "common/config/sync_rounds.h"

#include "common/config/job_spec_defaults.h"

namespace pstrain {

int32_t ReplicasToAggregateOf(const TrainingSpec& training, int32_t num_workers) {
  return training.replicas_to_aggregate() > 0 ? training.replicas_to_aggregate() : num_workers;
}

bool RoundsHaveWorkerSlots(const TrainingSpec& training, int32_t num_workers) {
  return UpdateModeOf(training) == UPDATE_MODE_SYNC &&
         ReplicasToAggregateOf(training, num_workers) == num_workers;
}

bool RoundsAreAgreed(const TrainingSpec& training, int32_t num_shards) {
  return UpdateModeOf(training) == UPDATE_MODE_SYNC && num_shards > 1;
}

}  // namespace pstrain
