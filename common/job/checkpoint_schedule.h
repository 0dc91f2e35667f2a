#ifndef PSTRAIN_COMMON_JOB_CHECKPOINT_SCHEDULE_H_
#define PSTRAIN_COMMON_JOB_CHECKPOINT_SCHEDULE_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "protos/job.pb.h"
#include "common/clock/clock.h"
#include "common/job/checkpoint_kind.h"

namespace pstrain {

// Why a checkpoint is due.
enum class CheckpointTrigger {
  kNone,
  kSteps,    // every_steps global steps since the last checkpoint
  kSeconds,  // every_seconds since the last checkpoint
  kFinal,    // training ended
};

// When the running job saves checkpoints. Periodically, by global steps
// or by seconds since the last checkpoint, whichever comes first when both
// are set (as TensorFlow's CheckpointSaverHook counts: from the last save,
// not from multiples of the interval, so a save that came late delays the
// next one rather than bunching two together); with neither set, every 600
// seconds. And always once at the end. A failed attempt counts as a save
// for the intervals: the schedule tries again one interval later. Thread-safe.
class CheckpointSchedule {
 public:
  // `spec` as PrepareJobSpec filled it. Intervals count from now and from
  // `start_step` (0, or the step of the checkpoint the job resumed from).
  CheckpointSchedule(const CheckpointSpec& spec, Clock& clock, int64_t start_step);

  CheckpointSchedule(const CheckpointSchedule&) = delete;
  CheckpointSchedule& operator=(const CheckpointSchedule&) = delete;

  // Whether a periodic checkpoint is due at `global_step`. Never at or
  // below the step of the last checkpoint or failed attempt: with no
  // progress there is nothing new to save, however long it has been.
  CheckpointTrigger Due(int64_t global_step) const;

  // kFinal until the final checkpoint has been recorded. The final one is
  // due even at the step of the last periodic checkpoint: only a MANIFEST
  // marked final tells evaluators that training is over.
  CheckpointTrigger DueAtEnd() const;

  // A checkpoint at `step` was saved now: both intervals restart.
  void RecordSaved(int64_t step, CheckpointKind kind);

  // A checkpoint at `step` failed now: both intervals restart as after a
  // save, so that a full disk is tried again one interval later, neither
  // never nor at every progress report. last_saved_step() stays.
  void RecordFailed(int64_t step);

  // When the seconds interval next falls due (InfiniteFuture without one),
  // for a timer that checks Due() without waiting for a progress report.
  absl::Time NextDueTime() const;

  // When a periodic checkpoint next falls due, for a person: "at step 800",
  // "in 10m" or "at step 800 or in 10m, whichever comes first".
  std::string DescribeNextDue() const;

  int64_t last_saved_step() const;

 private:
  // Constant after construction.
  Clock& clock_;
  const int64_t every_steps_;   // 0: none
  const absl::Duration every_;  // InfiniteDuration: none

  mutable absl::Mutex mu_;
  // The last attempt, saved or failed, which the intervals count from.
  int64_t last_step_ ABSL_GUARDED_BY(mu_);
  int64_t saved_step_ ABSL_GUARDED_BY(mu_);
  absl::Time last_time_ ABSL_GUARDED_BY(mu_);
  bool final_saved_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_JOB_CHECKPOINT_SCHEDULE_H_
