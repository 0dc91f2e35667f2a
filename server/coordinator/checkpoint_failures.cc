#include "server/coordinator/checkpoint_failures.h"

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_layout.h"

namespace pstrain {
namespace coordinator {
namespace {

// "ckpt-600 (2 in a row of at most 3): <error>".
std::string Describe(const CheckpointFailure& failure) {
  std::string text = absl::StrCat(failure.final() ? "the final " : "",
                                  CheckpointDirName(failure.step()), " (",
                                  failure.consecutive_failures(), " in a row");
  if (failure.max_consecutive_failures() > 0) {
    absl::StrAppend(&text, " of at most ", failure.max_consecutive_failures());
  }
  absl::StrAppend(&text, "): ", failure.message());
  return text;
}

}  // namespace

CheckpointFailures::CheckpointFailures(int32_t max_consecutive)
    : max_consecutive_(max_consecutive) {}

CheckpointFailure CheckpointFailures::RecordFailed(int64_t step, CheckpointKind kind,
                                                   const absl::Status& error) {
  ++in_a_row_;
  ++total_;
  CheckpointFailure failure;
  failure.set_step(step);
  failure.set_message(std::string(error.message()));
  failure.set_consecutive_failures(in_a_row_);
  failure.set_max_consecutive_failures(max_consecutive_);
  failure.set_final(kind == CheckpointKind::kFinal);
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
      CheckpointDirName(last_->step()), ": ", last_->message(),
      "; make room in checkpoint.model_dir or fix what the error names");
}

void CheckpointFailures::FillStatus(JobStatus& status) const {
  status.set_checkpoint_failures(total_);
  status.set_last_checkpoint_failure(last_.has_value() ? Describe(*last_) : "");
}

}  // namespace coordinator
}  // namespace pstrain
