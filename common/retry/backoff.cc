#include "common/retry/backoff.h"

#include <algorithm>

namespace pstrain {

Backoff::Backoff(const RetryOptions& options, RandomSource& random)
    : options_(options), random_(random), nominal_(options.initial_backoff) {}

absl::Duration Backoff::Next() {
  const double jitter = std::clamp(options_.jitter, 0.0, 1.0);
  const absl::Duration pause = nominal_ * (1.0 - jitter * random_.Uniform());
  nominal_ = std::min(nominal_ * std::max(1.0, options_.multiplier), options_.max_backoff);
  return pause;
}

}  // namespace pstrain
