#include "evaluator/eval_schedule.h"

#include <algorithm>

namespace pstrain {
namespace evaluator {

absl::string_view SkipReasonLabel(SkipReason reason) {
  switch (reason) {
    case SkipReason::kThrottled:
      return "throttled";
    case SkipReason::kAlreadyEvaluated:
      return "already_evaluated";
    case SkipReason::kOlderThanEvaluated:
      return "older_than_evaluated";
  }
  return "unknown";
}

absl::string_view SkipReasonDescription(SkipReason reason) {
  switch (reason) {
    case SkipReason::kThrottled:
      return "a newer checkpoint came before its turn and the evaluator takes the newest "
             "(eval.throttle_secs spaces evaluations)";
    case SkipReason::kAlreadyEvaluated:
      return "it was evaluated before";
    case SkipReason::kOlderThanEvaluated:
      return "a newer checkpoint was evaluated already";
  }
  return "unknown reason";
}

EvalSchedule::EvalSchedule(absl::Time job_start, absl::Duration start_delay,
                           absl::Duration throttle)
    : not_before_(job_start + std::max(start_delay, absl::ZeroDuration())),
      throttle_(std::max(throttle, absl::ZeroDuration())) {}

std::vector<SkippedCandidate> EvalSchedule::Offer(const CheckpointCandidate& checkpoint) {
  std::vector<SkippedCandidate> skipped;
  if (pending_.count(checkpoint.step)) {
    // A repeated notification; a final flag on either copy sticks.
    if (checkpoint.final) pending_[checkpoint.step].final = true;
    return skipped;
  }
  if (!checkpoint.final) {
    if (evaluated_.contains(checkpoint.step)) {
      skipped.push_back({checkpoint, SkipReason::kAlreadyEvaluated});
      return skipped;
    }
    if (checkpoint.step < newest_evaluated_) {
      skipped.push_back({checkpoint, SkipReason::kOlderThanEvaluated});
      return skipped;
    }
    // Only the newest non-final checkpoint waits.
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.final) {
        ++it;
        continue;
      }
      if (it->first > checkpoint.step) {
        skipped.push_back({checkpoint, SkipReason::kThrottled});
        return skipped;
      }
      skipped.push_back({it->second, SkipReason::kThrottled});
      it = pending_.erase(it);
    }
  }
  pending_[checkpoint.step] = checkpoint;
  return skipped;
}

void EvalSchedule::MarkEvaluated(int64_t step) {
  evaluated_.insert(step);
  newest_evaluated_ = std::max(newest_evaluated_, step);
}

absl::Time EvalSchedule::ReadyAt() const {
  if (pending_.empty()) return absl::InfiniteFuture();
  for (const auto& entry : pending_) {
    if (entry.second.final) return absl::InfinitePast();
  }
  if (last_start_ == absl::InfinitePast()) return not_before_;
  return std::max(not_before_, last_start_ + throttle_);
}

std::optional<CheckpointCandidate> EvalSchedule::Take(absl::Time now,
                                                      std::vector<SkippedCandidate>* skipped) {
  if (pending_.empty() || now < ReadyAt()) return std::nullopt;
  // The final checkpoint if there is one, else the only pending one.
  auto chosen = pending_.begin();
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->second.final) {
      chosen = it;
      break;
    }
  }
  CheckpointCandidate taken = chosen->second;
  pending_.erase(chosen);
  if (taken.final) {
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->first < taken.step && !it->second.final) {
        skipped->push_back({it->second, SkipReason::kThrottled});
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }
  last_start_ = now;
  return taken;
}

std::vector<CheckpointCandidate> EvalSchedule::Clear() {
  std::vector<CheckpointCandidate> dropped;
  for (auto& entry : pending_) dropped.push_back(std::move(entry.second));
  pending_.clear();
  return dropped;
}

}  // namespace evaluator
}  // namespace pstrain
