#include "common/job/checkpoint_failures.h"

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_layout.h"

namespace pstrain {

std::string DescribeFailedCheckpoint(const FailedCheckpoint& failure) {
  std::string text = absl::StrCat(failure.final ? "the final " : "",
                                  CheckpointDirName(failure.step), " (", failure.consecutive,
                                  " in a row");
  if (failure.max_consecutive > 0) {
    absl::StrAppend(&text, " of at most ", failure.max_consecutive);
  }
  absl::StrAppend(&text, "): ", failure.message);
  return text;
}

CheckpointFailures::CheckpointFailures(int32_t max_consecutive)
    : max_consecutive_(max_consecutive) {}

FailedCheckpoint CheckpointFailures::RecordFailed(int64_t step, CheckpointKind kind,
                                                  const absl::Status& error) {
  ++in_a_row_;
  ++total_;
  FailedCheckpoint failure;
  failure.step = step;
  failure.message = std::string(error.message());
  failure.consecutive = in_a_row_;
  failure.max_consecutive = max_consecutive_;
  failure.final = kind == CheckpointKind::kFinal;
  last_ = failure;
  return failure;
}

void CheckpointFailures::RecordSaved() { in_a_row_ = 0; }

std::optional<std::string> CheckpointFailures::TooMany() const {
  if (max_consecutive_ <= 0 || in_a_row_ < max_consecutive_ || !last_.has_value()) {
    return std::nullopt;
  }
  return absl::StrCat(
      in_a_row_, in_a_row_ == 1 ? " checkpoint" : " checkpoints",
      " failed in a row (checkpoint.max_consecutive_failures ", max_consecutive_, "), the last, ",
      CheckpointDirName(last_->step), ": ", last_->message,
      "; make room in checkpoint.model_dir or fix what the error names");
}

std::string CheckpointFailures::DescribeLast() const {
  return last_.has_value() ? DescribeFailedCheckpoint(*last_) : "";
}

}  // namespace pstrain
