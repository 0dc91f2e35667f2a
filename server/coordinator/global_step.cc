#include "server/coordinator/global_step.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace coordinator {

GlobalStep::GlobalStep(int64_t initial) : step_(initial) {}

int64_t GlobalStep::value() const {
  absl::MutexLock lock(&mu_);
  return step_;
}

absl::StatusOr<int64_t> GlobalStep::Advance(absl::string_view reporter, uint64_t sequence,
                                            int64_t applied_updates) {
  if (applied_updates < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("applied updates must be >= 0, got ", applied_updates));
  }
  absl::MutexLock lock(&mu_);
  if (applied_updates > std::numeric_limits<int64_t>::max() - step_) {
    return absl::InvalidArgumentError(
        absl::StrCat(applied_updates, " applied updates would overflow the global step ", step_));
  }
  if (sequence != 0) {
    auto [it, inserted] = last_sequence_.try_emplace(std::string(reporter), sequence);
    if (!inserted) {
      if (sequence <= it->second) return step_;
      it->second = sequence;
    }
  }
  step_ += applied_updates;
  return step_;
}

absl::StatusOr<int64_t> GlobalStep::RaiseTo(int64_t completed_rounds) {
  if (completed_rounds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("completed rounds must be >= 0, got ", completed_rounds));
  }
  absl::MutexLock lock(&mu_);
  step_ = std::max(step_, completed_rounds);
  return step_;
}

absl::Status GlobalStep::RestoreTo(int64_t step) {
  if (step < 0) {
    return absl::InvalidArgumentError(absl::StrCat("a restored step must be >= 0, got ", step));
  }
  absl::MutexLock lock(&mu_);
  step_ = step;
  return absl::OkStatus();
}

void GlobalStep::ForgetReporter(absl::string_view reporter) {
  absl::MutexLock lock(&mu_);
  last_sequence_.erase(reporter);
}

}  // namespace coordinator
}  // namespace pstrain
