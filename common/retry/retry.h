#ifndef PSTRAIN_COMMON_RETRY_RETRY_H_
#define PSTRAIN_COMMON_RETRY_RETRY_H_

// Retrying calls that may succeed if repeated, with Backoff's pauses, up to a
// deadline or until stopped, saying what is waited for while it lasts; and
// the loops that repeat work until stopped (a member taking assignment after
// assignment, a heartbeat every interval). Every pause of a process waits
// here, on its StopSignal, so that stopping the process ends them all.
// By default only Unavailable means "this call may succeed if repeated";
// callers that tell refusals apart by their ErrorReason say which are worth
// another attempt with RetryableReasons or RetryableUnavailable.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "common/random/random_source.h"
#include "common/retry/backoff.h"
#include "protos/status.pb.h"

namespace pstrain {

// What a retry loop waits with: time, jitter, and the signal that ends it.
// All three are borrowed and must outlive the loops that use them.
struct RetryContext {
  Clock& clock;
  RandomSource& random;
  const StopSignal& stop;
};

// Which statuses are worth another attempt.
using RetryablePredicate = std::function<bool(const absl::Status&)>;

// Unavailable, except with one of `answers`: refusals that are answers for
// the caller to act on (every data range is leased out, the job is
// starting), not a peer that cannot be reached.
RetryablePredicate RetryableUnavailable(std::vector<ErrorReason> answers = {});

// Statuses with one of `reasons`, whatever their code: refusals that say
// "ask again later" (ERROR_REASON_NO_FREE_LEASE).
RetryablePredicate RetryableReasons(std::vector<ErrorReason> reasons);

// Runs `attempt` until `retryable` says its status is not worth another
// attempt, the retry deadline passes, or `context.stop` is set, pausing with
// Backoff in between. `what` names the peer and the call for log lines
// ("waiting for ps/1 (push 17) since 12s: ..."). Returns the last attempt's
// status; Cancelled if stopped during a pause; once the deadline passes,
// DeadlineExceeded keeping the last error's message (Unavailable when
// options.give_up_as_deadline_exceeded is false).
absl::Status Retry(const std::string& what, const RetryOptions& options,
                   const RetryContext& context, const RetryablePredicate& retryable,
                   const std::function<absl::Status()>& attempt);

// Retry of the statuses that mean "this call may succeed if repeated":
// Unavailable.
absl::Status RetryOnUnavailable(const std::string& what, const RetryOptions& options,
                                const RetryContext& context,
                                const std::function<absl::Status()>& attempt);

// Retry without a deadline: until an attempt succeeds, `retryable` refuses
// its status, or `context.stop` is set (Cancelled). options.deadline is not
// read. For what a process cannot do without (registering with the
// coordinator, which may start later or be away for a while).
absl::Status RetryUntilStopped(const std::string& what, const RetryOptions& options,
                               const RetryContext& context, const RetryablePredicate& retryable,
                               const std::function<absl::Status()>& attempt);

// A loop that serves until stopped: runs `attempt` again and again. After an
// OK, the next attempt starts at once and the pauses start over; after a
// status `retryable` accepts, it pauses with Backoff. Ends with the first
// status `retryable` refuses, or Cancelled once `context.stop` is set.
// options.deadline is not read.
absl::Status RepeatUntilStopped(const std::string& what, const RetryOptions& options,
                                const RetryContext& context, const RetryablePredicate& retryable,
                                const std::function<absl::Status()>& attempt);

// Calls `tick` now and then once every `interval()` (read after each tick)
// on `context.clock`, until it returns false or `context.stop` is set. Not a
// retry loop: for work that is periodic by nature (heartbeats, a report
// every second while waiting to hear a stop).
void RepeatEvery(const RetryContext& context, const std::function<absl::Duration()>& interval,
                 const std::function<bool()>& tick);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_RETRY_RETRY_H_
