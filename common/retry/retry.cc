#include "common/retry/retry.h"

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace pstrain {

absl::Status RetryOnUnavailable(const std::string& what, const RetryOptions& options,
                                const RetryContext& context,
                                const std::function<absl::Status()>& attempt) {
  return Retry(
      what, options, context,
      [](const absl::Status& status) { return absl::IsUnavailable(status); }, attempt);
}

absl::Status Retry(const std::string& what, const RetryOptions& options,
                   const RetryContext& context,
                   const std::function<bool(const absl::Status&)>& retryable,
                   const std::function<absl::Status()>& attempt) {
  Clock& clock = context.clock;
  const absl::Time start = clock.Now();
  absl::Time next_log = start + options.log_every;
  Backoff backoff(options, context.random);
  for (int attempts = 1;; ++attempts) {
    absl::Status status = attempt();
    if (status.ok() || !retryable(status)) {
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
      return absl::Status(
          options.give_up_as_deadline_exceeded ? absl::StatusCode::kDeadlineExceeded
                                               : absl::StatusCode::kUnavailable,
          absl::StrCat("gave up waiting for ", what, " after ", attempts, " attempts in ",
                       absl::FormatDuration(absl::Trunc(waited, absl::Seconds(1))), ": ",
                       status.message()));
    }
    if (now >= next_log) {
      LOG(WARNING) << "waiting for " << what << " since "
                   << absl::FormatDuration(absl::Trunc(waited, absl::Seconds(1))) << " ("
                   << attempts << " attempts): " << status;
      next_log = now + options.log_every;
    }
    if (context.stop.WaitUntil(clock, now + pause)) {
      return absl::CancelledError(absl::StrCat("stopped while waiting for ", what));
    }
  }
}

}  // namespace pstrain
