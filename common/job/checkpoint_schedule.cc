#include "common/job/checkpoint_schedule.h"

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

// CheckpointSpec's documented default when neither interval is set.
constexpr double kDefaultEverySeconds = 600;

absl::Duration SecondsInterval(const CheckpointSpec& spec) {
  if (spec.every_seconds() > 0) return absl::Seconds(spec.every_seconds());
  if (spec.every_steps() > 0) return absl::InfiniteDuration();
  return absl::Seconds(kDefaultEverySeconds);
}

}  // namespace

CheckpointSchedule::CheckpointSchedule(const CheckpointSpec& spec, Clock& clock, int64_t start_step)
    : clock_(clock),
      every_steps_(spec.every_steps() > 0 ? spec.every_steps() : 0),
      every_(SecondsInterval(spec)),
      last_step_(start_step),
      saved_step_(start_step),
      last_time_(clock.Now()) {}

CheckpointTrigger CheckpointSchedule::Due(int64_t global_step) const {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  if (global_step <= last_step_) return CheckpointTrigger::kNone;
  if (every_steps_ > 0 && global_step - last_step_ >= every_steps_) {
    return CheckpointTrigger::kSteps;
  }
  if (now - last_time_ >= every_) return CheckpointTrigger::kSeconds;
  return CheckpointTrigger::kNone;
}

CheckpointTrigger CheckpointSchedule::DueAtEnd() const {
  absl::MutexLock lock(&mu_);
  return final_saved_ ? CheckpointTrigger::kNone : CheckpointTrigger::kFinal;
}

void CheckpointSchedule::RecordSaved(int64_t step, CheckpointKind kind) {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  last_step_ = step;
  saved_step_ = step;
  last_time_ = now;
  final_saved_ = final_saved_ || kind == CheckpointKind::kFinal;
}

void CheckpointSchedule::RecordFailed(int64_t step) {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  last_step_ = step;
  last_time_ = now;
}

absl::Time CheckpointSchedule::NextDueTime() const {
  absl::MutexLock lock(&mu_);
  if (every_ == absl::InfiniteDuration()) return absl::InfiniteFuture();
  return last_time_ + every_;
}

std::string CheckpointSchedule::DescribeNextDue() const {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  const std::string at_step =
      every_steps_ > 0 ? absl::StrCat("at step ", last_step_ + every_steps_) : "";
  if (every_ == absl::InfiniteDuration()) return at_step;
  const absl::Duration left = absl::Floor(last_time_ + every_ - now, absl::Seconds(1));
  if (left <= absl::ZeroDuration()) return "at the next progress report";
  const std::string in_time = absl::StrCat("in ", absl::FormatDuration(left));
  if (at_step.empty()) return in_time;
  return absl::StrCat(at_step, " or ", in_time, ", whichever comes first");
}

int64_t CheckpointSchedule::last_saved_step() const {
  absl::MutexLock lock(&mu_);
  return saved_step_;
}

}  // namespace pstrain
