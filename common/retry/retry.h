#ifndef PSTRAIN_COMMON_RETRY_RETRY_H_
#define PSTRAIN_COMMON_RETRY_RETRY_H_

// Retrying calls that fail with Unavailable, with Backoff's pauses, up to a
// deadline, saying what is waited for while it lasts. Only Unavailable means
// "this call may succeed if repeated"; every other status is returned at
// once.

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "common/random/random_source.h"
#include "common/retry/backoff.h"

namespace pstrain {

// What a retry loop waits with: time, jitter, and the signal that ends it.
// All three are borrowed and must outlive the loops that use them.
struct RetryContext {
  Clock& clock;
  RandomSource& random;
  const StopSignal& stop;
};

// Runs `attempt` until `retryable` says its status is not worth another
// attempt, the retry deadline passes, or `context.stop` is set, pausing with
// Backoff in between. `what` names the peer and the call for log lines
// ("waiting for ps/1 (push 17) since 12s: ..."). Returns the last attempt's
// status; Cancelled if stopped during a pause; once the deadline passes,
// DeadlineExceeded keeping the last error's message (Unavailable when
// options.give_up_as_deadline_exceeded is false).
absl::Status Retry(const std::string& what, const RetryOptions& options,
                   const RetryContext& context,
                   const std::function<bool(const absl::Status&)>& retryable,
                   const std::function<absl::Status()>& attempt);

// Retry of the statuses that mean "this call may succeed if repeated":
// Unavailable.
absl::Status RetryOnUnavailable(const std::string& what, const RetryOptions& options,
                                const RetryContext& context,
                                const std::function<absl::Status()>& attempt);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_RETRY_RETRY_H_
