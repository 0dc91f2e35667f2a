#ifndef PSTRAIN_COMMON_JOB_CHECKPOINT_FAILURES_H_
#define PSTRAIN_COMMON_JOB_CHECKPOINT_FAILURES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "common/job/checkpoint_kind.h"

namespace pstrain {

// One checkpoint that could not be saved, and its place in the row.
struct FailedCheckpoint {
  int64_t step = 0;
  // What went wrong: "ps/0: Snapshot: ...: No space left on device".
  std::string message;
  // Failures in a row, this one included.
  int32_t consecutive = 0;
  // checkpoint.max_consecutive_failures: the job fails when `consecutive`
  // reaches it (0: never).
  int32_t max_consecutive = 0;
  // The final checkpoint: the job fails with it.
  bool final = false;
};

// "ckpt-600 (2 in a row of at most 3): <error>", or "the final ckpt-600
// (...)": what the job's status and train-local's warning say of it.
std::string DescribeFailedCheckpoint(const FailedCheckpoint& failure);

// The checkpoints of one job that could not be saved: how many came in a
// row, and when they are too many to train on. One failure is not fatal
// (space may be freed, an I/O error may pass), but training on with nothing
// saved only grows what a crash would lose. Every trainer follows it: the
// coordinator for a cluster job, `pstrain train-local` for a run in one
// process. Thread-compatible: the job's trainer calls it from one thread.
class CheckpointFailures {
 public:
  // `max_consecutive`: checkpoint.max_consecutive_failures as filled; 0:
  // never too many.
  explicit CheckpointFailures(int32_t max_consecutive);

  // A checkpoint of `kind` at `step` failed with `error`. Returns what the
  // job tells its user of it.
  FailedCheckpoint RecordFailed(int64_t step, CheckpointKind kind, const absl::Status& error);

  // A checkpoint was saved: the count in a row starts again.
  void RecordSaved();

  // Why the job must fail, once max_consecutive failures came in a row
  // (naming the last failure and what to do); nullopt until then.
  std::optional<std::string> TooMany() const;

  // Every failure of the job, saved checkpoints between them or not.
  int32_t total() const { return total_; }
  // DescribeFailedCheckpoint of the last failure; empty before the first.
  std::string DescribeLast() const;

 private:
  const int32_t max_consecutive_;

  int32_t in_a_row_ = 0;
  int32_t total_ = 0;
  std::optional<FailedCheckpoint> last_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_JOB_CHECKPOINT_FAILURES_H_
