#include "common/retry/retry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

std::string Seconds(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Seconds(1)));
}

bool HasOneOf(const absl::Status& status, const std::vector<ErrorReason>& reasons) {
  const ErrorReason reason = ReasonOf(status);
  return std::find(reasons.begin(), reasons.end(), reason) != reasons.end();
}

// What ends a loop besides a refused status and the stop signal.
enum class Until {
  kSuccessOrDeadline,  // Retry
  kSuccess,            // RetryUntilStopped
  kNothingElse,        // RepeatUntilStopped: an OK starts the next attempt
};

absl::Status RetryLoop(const std::string& what, const RetryOptions& options,
                       const RetryContext& context, const RetryablePredicate& retryable,
                       const std::function<absl::Status()>& attempt, Until until) {
  Clock& clock = context.clock;
  absl::Time start = clock.Now();
  absl::Time next_log = start + options.log_every;
  Backoff backoff(options, context.random);
  for (int attempts = 1;; ++attempts) {
    absl::Status status = attempt();
    if (status.ok() && until == Until::kNothingElse) {
      if (context.stop.stopped()) {
        return absl::CancelledError(absl::StrCat("stopped while serving ", what));
      }
      backoff.Reset();
      attempts = 0;
      start = clock.Now();
      next_log = start + options.log_every;
      continue;
    }
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
    if (until == Until::kSuccessOrDeadline && now + pause - start > options.deadline) {
      return absl::Status(options.give_up_as_deadline_exceeded ? absl::StatusCode::kDeadlineExceeded
                                                               : absl::StatusCode::kUnavailable,
                          absl::StrCat("gave up waiting for ", what, " after ", attempts,
                                       " attempts in ", Seconds(waited), ": ", status.message()));
    }
    if (now >= next_log) {
      LOG(WARNING) << "waiting for " << what << " since " << Seconds(waited) << " (" << attempts
                   << " attempts): " << status;
      next_log = now + options.log_every;
    }
    if (context.stop.WaitUntil(clock, now + pause)) {
      return absl::CancelledError(absl::StrCat("stopped while waiting for ", what));
    }
  }
}

}  // namespace

RetryablePredicate RetryableUnavailable(std::vector<ErrorReason> answers) {
  return [answers = std::move(answers)](const absl::Status& status) {
    return absl::IsUnavailable(status) && !HasOneOf(status, answers);
  };
}

RetryablePredicate RetryableReasons(std::vector<ErrorReason> reasons) {
  return [reasons = std::move(reasons)](const absl::Status& status) {
    return !status.ok() && HasOneOf(status, reasons);
  };
}

absl::Status Retry(const std::string& what, const RetryOptions& options,
                   const RetryContext& context, const RetryablePredicate& retryable,
                   const std::function<absl::Status()>& attempt) {
  return RetryLoop(what, options, context, retryable, attempt, Until::kSuccessOrDeadline);
}

absl::Status RetryOnUnavailable(const std::string& what, const RetryOptions& options,
                                const RetryContext& context,
                                const std::function<absl::Status()>& attempt) {
  return Retry(what, options, context, RetryableUnavailable(), attempt);
}

absl::Status RetryUntilStopped(const std::string& what, const RetryOptions& options,
                               const RetryContext& context, const RetryablePredicate& retryable,
                               const std::function<absl::Status()>& attempt) {
  return RetryLoop(what, options, context, retryable, attempt, Until::kSuccess);
}

absl::Status RepeatUntilStopped(const std::string& what, const RetryOptions& options,
                                const RetryContext& context, const RetryablePredicate& retryable,
                                const std::function<absl::Status()>& attempt) {
  return RetryLoop(what, options, context, retryable, attempt, Until::kNothingElse);
}

void RepeatEvery(const RetryContext& context, const std::function<absl::Duration()>& interval,
                 const std::function<bool()>& tick) {
  while (!context.stop.stopped() && tick()) {
    if (context.stop.SleepFor(context.clock, interval())) return;
  }
}

}  // namespace pstrain
