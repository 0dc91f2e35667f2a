#ifndef PSTRAIN_EVALUATOR_EVAL_SCHEDULE_H_
#define PSTRAIN_EVALUATOR_EVAL_SCHEDULE_H_

// Which checkpoint of a job the evaluator evaluates next, and when:
//
//  - none before start_delay after the job started, and at most one
//    evaluation started per throttle; a checkpoint that arrives meanwhile
//    waits, and a newer one replaces it (the older is skipped, "throttled");
//  - the final checkpoint is never skipped and never waits: it is
//    evaluated as soon as the one in progress ends;
//  - a checkpoint already evaluated, or older than the newest evaluated, is
//    skipped (except the final one, whose result the job waits for).
//
// Not thread-safe: the evaluation loop holds its lock around every call.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace pstrain {
namespace evaluator {

// A checkpoint the evaluator was told of.
struct CheckpointCandidate {
  int64_t step = 0;
  std::string path;  // model_dir/ckpt-<step>
  bool final = false;
  // Came with a lease from WatchCheckpoints, to release once dealt with.
  bool leased = false;
};

enum class SkipReason {
  kThrottled,           // a newer checkpoint arrived while it waited
  kAlreadyEvaluated,    // its step was evaluated before
  kOlderThanEvaluated,  // a newer checkpoint was evaluated already
};

// "throttled", "already_evaluated", "older_than_evaluated": the metric
// label and what logs say.
absl::string_view SkipReasonLabel(SkipReason reason);
// For people: "a newer checkpoint arrived while it waited (throttle_secs)".
absl::string_view SkipReasonDescription(SkipReason reason);

struct SkippedCandidate {
  CheckpointCandidate checkpoint;
  SkipReason reason;
};

class EvalSchedule {
 public:
  // `job_start`: when the evaluator took up the job.
  EvalSchedule(absl::Time job_start, absl::Duration start_delay, absl::Duration throttle);

  // A checkpoint arrived. Returns the checkpoints this decides not to
  // evaluate: `checkpoint` itself, or the older one it replaces. A step
  // already pending is ignored (a repeated notification).
  std::vector<SkippedCandidate> Offer(const CheckpointCandidate& checkpoint);

  // Records that `step` was evaluated (now, or before a restart).
  void MarkEvaluated(int64_t step);
  bool WasEvaluated(int64_t step) const { return evaluated_.contains(step); }
  // The newest step evaluated; -1 if none.
  int64_t newest_evaluated() const { return newest_evaluated_; }

  // When the next pending checkpoint may start: now for a final one,
  // otherwise the later of job_start + start_delay and the last start +
  // throttle. InfiniteFuture when nothing is pending.
  absl::Time ReadyAt() const;

  // The checkpoint to evaluate now, if one is ready at `now`, taken out of
  // the pending ones and counted as started at `now` (for the throttle).
  // Taking the final checkpoint skips the older ones still pending; they go
  // to *skipped.
  std::optional<CheckpointCandidate> Take(absl::Time now, std::vector<SkippedCandidate>* skipped);

  bool has_pending() const { return !pending_.empty(); }
  int pending_count() const { return static_cast<int>(pending_.size()); }
  // Drops every pending checkpoint (the job was left) and returns them.
  std::vector<CheckpointCandidate> Clear();

 private:
  const absl::Time not_before_;
  const absl::Duration throttle_;
  absl::Time last_start_ = absl::InfinitePast();
  // At most one non-final checkpoint (the newest) and any final one, by step.
  std::map<int64_t, CheckpointCandidate> pending_;
  absl::flat_hash_set<int64_t> evaluated_;
  int64_t newest_evaluated_ = -1;
};

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_EVAL_SCHEDULE_H_
