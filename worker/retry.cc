#include "worker/retry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace pstrain {
namespace worker {

Backoff::Backoff(const RetryOptions& options, RandomSource& random)
    : options_(options), random_(random), nominal_(options.initial_backoff) {}

absl::Duration Backoff::Next() {
  const double jitter = std::clamp(options_.jitter, 0.0, 1.0);
  const absl::Duration pause = nominal_ * (1.0 - jitter * random_.Uniform());
  nominal_ = std::min(nominal_ * std::max(1.0, options_.multiplier), options_.max_backoff);
  return pause;
}

absl::Status RetryOnUnavailable(const std::string& what, const RetryOptions& options, Clock& clock,
                                RandomSource& random, const absl::Notification* stop,
                                const std::function<absl::Status()>& attempt) {
  const absl::Time start = clock.Now();
  absl::Time next_log = start + options.log_every;
  Backoff backoff(options, random);
  for (int attempts = 1;; ++attempts) {
    absl::Status status = attempt();
    if (!absl::IsUnavailable(status)) {
      if (attempts > 1 && status.ok()) {
        LOG(INFO) << what << " succeeded after " << attempts << " attempts in "
                  << absl::FormatDuration(absl::Trunc(clock.Now() - start, absl::Milliseconds(1)));
      }
      return status;
    }
    const absl::Duration pause = backoff.Next();
    const absl::Time now = clock.Now();
    const absl::Duration waited = now - start;
    if (now + pause - start > options.deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "gave up waiting for ", what, " after ", attempts, " attempts in ",
          absl::FormatDuration(absl::Trunc(waited, absl::Seconds(1))), ": ", status.message()));
    }
    if (now >= next_log) {
      LOG(WARNING) << "waiting for " << what << " since "
                   << absl::FormatDuration(absl::Trunc(waited, absl::Seconds(1))) << " ("
                   << attempts << " attempts): " << status;
      next_log = now + options.log_every;
    }
    if (clock.SleepFor(pause, stop)) {
      return absl::CancelledError(absl::StrCat("stopped while waiting for ", what));
    }
  }
}

}  // namespace worker
}  // namespace pstrain
