#include "server/coordinator/global_step.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace coordinator {

GlobalStep::GlobalStep(int64_t initial) : step_(initial) {}

int64_t GlobalStep::value() const {
  absl::MutexLock lock(&mu_);
  return step_;
}

absl::StatusOr<int64_t> GlobalStep::RaiseTo(int64_t applied) {
  if (applied < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("a shard's applied updates must be >= 0, got ", applied));
  }
  absl::MutexLock lock(&mu_);
  step_ = std::max(step_, applied);
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

}  // namespace coordinator
}  // namespace pstrain
