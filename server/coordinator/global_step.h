#ifndef PSTRAIN_SERVER_COORDINATOR_GLOBAL_STEP_H_
#define PSTRAIN_SERVER_COORDINATOR_GLOBAL_STEP_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace pstrain {
namespace coordinator {

// The job's global step: the count of updates the shards applied, one per
// round in sync mode and one per applied push otherwise. The shards count
// it (each shard's version is the updates it applied), so it is the
// version of the shard that applied the most: a killed worker's applied
// pushes count, and a report cannot count a push twice. The coordinator
// learns it from the versions the workers saw in their push answers and
// pulls (ProgressReport.parameter_version), from the snapshots of each
// checkpoint, which it is named by, and, with agreed sync rounds, from the
// round keeper's commits (round_keeper.h). It only grows, and goes back only when
// the job is restored to a checkpoint's step. Thread-safe.
class GlobalStep {
 public:
  explicit GlobalStep(int64_t initial = 0);

  GlobalStep(const GlobalStep&) = delete;
  GlobalStep& operator=(const GlobalStep&) = delete;

  int64_t value() const;

  // Raises the step to `applied` (a shard's version) if it is below: a
  // version seen before, or an older one seen by a slower worker, takes
  // nothing back. Returns the step.
  // InvalidArgument: applied < 0.
  absl::StatusOr<int64_t> RaiseTo(int64_t applied);

  // Sets the step to a restored checkpoint's, the one way it goes back.
  // InvalidArgument: step < 0.
  absl::Status RestoreTo(int64_t step);

 private:
  mutable absl::Mutex mu_;
  int64_t step_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_GLOBAL_STEP_H_
