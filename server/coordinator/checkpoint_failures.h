#ifndef PSTRAIN_SERVER_COORDINATOR_CHECKPOINT_FAILURES_H_
#define PSTRAIN_SERVER_COORDINATOR_CHECKPOINT_FAILURES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "common/job/checkpoint_schedule.h"
#include "protos/coordinator.pb.h"
#include "protos/job.pb.h"

namespace pstrain {
namespace coordinator {

// The checkpoints of one job that could not be saved: what each failure
// tells the user (its event and the job's status), how many came in a row,
// and when they are too many to train on. One failure is not fatal (space
// may be freed, an I/O error may pass), but training on with nothing saved
// only grows what a crash would lose. Thread-compatible: the job's runner
// calls it from one thread.
class CheckpointFailures {
 public:
  // `max_consecutive`: checkpoint.max_consecutive_failures as filled; 0:
  // never too many.
  explicit CheckpointFailures(int32_t max_consecutive);

  // A checkpoint of `kind` at `step` failed with `error`. Returns the event
  // that says so.
  CheckpointFailure RecordFailed(int64_t step, CheckpointKind kind, const absl::Status& error);

  // A checkpoint was saved: the count in a row starts again.
  void RecordSaved();

  // Why the job must fail, once max_consecutive failures came in a row
  // (naming the last failure and what to do); nullopt until then.
  std::optional<std::string> TooMany() const;

  // Sets `status`'s checkpoint_failures and last_checkpoint_failure.
  void FillStatus(JobStatus& status) const;

 private:
  const int32_t max_consecutive_;

  int32_t in_a_row_ = 0;
  int32_t total_ = 0;
  std::optional<CheckpointFailure> last_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_CHECKPOINT_FAILURES_H_
