#include "bench/sim/latency_sample.h"

#include <algorithm>
#include <cmath>

namespace pstrain {
namespace bench {

void LatencySample::Add(absl::Duration latency) {
  micros_.push_back(absl::ToInt64Microseconds(latency));
  sorted_ = micros_.size() <= 1 || (sorted_ && micros_[micros_.size() - 2] <= micros_.back());
}

void LatencySample::Merge(const LatencySample& other) {
  if (other.micros_.empty()) return;
  micros_.insert(micros_.end(), other.micros_.begin(), other.micros_.end());
  sorted_ = false;
}

absl::Duration LatencySample::Percentile(double p) const {
  if (micros_.empty()) return absl::ZeroDuration();
  if (!sorted_) {
    std::sort(micros_.begin(), micros_.end());
    sorted_ = true;
  }
  const double n = static_cast<double>(micros_.size());
  // Nearest rank: ceil(p/100 * n), at least 1.
  int64_t rank = static_cast<int64_t>(std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * n));
  rank = std::clamp<int64_t>(rank, 1, static_cast<int64_t>(micros_.size()));
  return absl::Microseconds(micros_[rank - 1]);
}

absl::Duration LatencySample::Mean() const {
  if (micros_.empty()) return absl::ZeroDuration();
  double total = 0;
  for (int64_t m : micros_) total += static_cast<double>(m);
  return absl::Microseconds(total / static_cast<double>(micros_.size()));
}

}  // namespace bench
}  // namespace pstrain
