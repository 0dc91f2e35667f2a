#include "evaluator/internal/retry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace pstrain {
namespace evaluator {
namespace internal {

absl::Status RetryOnUnavailable(const std::string& what, const RetryOptions& options, Clock& clock,
                                StopSignal& stop, const std::function<absl::Status()>& attempt) {
  const absl::Time start = clock.Now();
  absl::Time next_log = start + options.log_every;
  absl::Duration backoff = options.initial_backoff;
  while (true) {
    absl::Status status = attempt();
    if (!absl::IsUnavailable(status)) return status;
    const absl::Time now = clock.Now();
    if (now + backoff - start > options.deadline) {
      return absl::DeadlineExceededError(absl::StrCat("gave up on ", what, " after ",
                                                      absl::FormatDuration(now - start), ": ",
                                                      status.message()));
    }
    if (now >= next_log) {
      LOG(WARNING) << "waiting for " << what << " since " << absl::FormatDuration(now - start)
                   << ": " << status.message();
      next_log = now + options.log_every;
    }
    if (stop.WaitUntil(clock, now + backoff)) {
      return absl::CancelledError(absl::StrCat(what, " cancelled: the evaluator is stopping"));
    }
    backoff = std::min(backoff * 2, options.max_backoff);
  }
}

}  // namespace internal
}  // namespace evaluator
}  // namespace pstrain
