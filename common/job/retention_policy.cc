#include "common/job/retention_policy.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pstrain {

RetentionPolicy::RetentionPolicy(int max_to_keep) : max_to_keep_(std::max(max_to_keep, 0)) {}

absl::Status RetentionPolicy::Acquire(int64_t step, absl::string_view holder) {
  if (step < 0) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint step must be >= 0, got ", step));
  }
  if (holder.empty()) return absl::InvalidArgumentError("a checkpoint lease needs a holder");
  absl::MutexLock lock(&mu_);
  if (deleting_.count(step) > 0) {
    return absl::NotFoundError(
        absl::StrCat("checkpoint ", step, " is deleted under max_to_keep; use a newer one"));
  }
  leases_[step].insert(std::string(holder));
  return absl::OkStatus();
}

absl::Status RetentionPolicy::Release(int64_t step, absl::string_view holder) {
  absl::MutexLock lock(&mu_);
  auto it = leases_.find(step);
  if (it == leases_.end() || it->second.erase(std::string(holder)) == 0) {
    return absl::NotFoundError(absl::StrCat(holder, " holds no lease on checkpoint ", step));
  }
  if (it->second.empty()) leases_.erase(it);
  return absl::OkStatus();
}

int RetentionPolicy::ReleaseHolder(absl::string_view holder) {
  absl::MutexLock lock(&mu_);
  int released = 0;
  for (auto it = leases_.begin(); it != leases_.end();) {
    released += static_cast<int>(it->second.erase(std::string(holder)));
    it = it->second.empty() ? leases_.erase(it) : std::next(it);
  }
  return released;
}

bool RetentionPolicy::IsLeased(int64_t step) const {
  absl::MutexLock lock(&mu_);
  return leases_.count(step) > 0;
}

std::vector<int64_t> RetentionPolicy::ToDelete(absl::Span<const int64_t> existing) {
  std::vector<int64_t> steps(existing.begin(), existing.end());
  std::sort(steps.begin(), steps.end(), std::greater<int64_t>());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());

  absl::MutexLock lock(&mu_);
  // Forget deletions that happened; keep those still on disk.
  std::set<int64_t> still_deleting;
  for (int64_t step : steps) {
    if (deleting_.count(step) > 0) still_deleting.insert(step);
  }
  deleting_ = std::move(still_deleting);

  if (max_to_keep_ > 0) {
    // The newest is kept whatever happens: it is what a restart resumes from.
    for (size_t i = std::max<size_t>(max_to_keep_, 1); i < steps.size(); ++i) {
      if (leases_.count(steps[i]) == 0) deleting_.insert(steps[i]);
    }
  }
  return std::vector<int64_t>(deleting_.begin(), deleting_.end());
}

}  // namespace pstrain
