#ifndef PSTRAIN_EVALUATOR_INTERNAL_RETRY_H_
#define PSTRAIN_EVALUATOR_INTERNAL_RETRY_H_

// Retrying calls to the coordinator that fail with Unavailable, with
// exponential backoff up to a deadline, saying what is waited for while it
// lasts. Other codes are returned at once: only Unavailable means "this
// call may succeed if repeated".

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "evaluator/internal/stop_signal.h"

namespace pstrain {
namespace evaluator {
namespace internal {

struct RetryOptions {
  // First pause after a failed attempt. Default 100 ms.
  absl::Duration initial_backoff = absl::Milliseconds(100);
  // Pauses double up to this. Default 5 s. There is one evaluator per
  // cluster, so pauses need no jitter to keep retries apart.
  absl::Duration max_backoff = absl::Seconds(5);
  // Give up once the next attempt would start this long after the first.
  // Default 5 minutes; absl::InfiniteDuration() retries until stopped.
  absl::Duration deadline = absl::Minutes(5);
  // A WARNING "waiting for ..." line is logged once a loop has lasted this
  // long, and again at most this often. Default 10 s.
  absl::Duration log_every = absl::Seconds(10);
};

// Runs `attempt` until it returns something other than Unavailable, the
// deadline passes or `stop` is set, pausing in between. `what` names the
// call in log lines ("waiting for the coordinator (ReportEval of step 300)
// since 12s: ..."). Returns the last attempt's status; Cancelled if stopped
// during a pause; DeadlineExceeded (with the last error's message) once the
// deadline passes.
absl::Status RetryOnUnavailable(const std::string& what, const RetryOptions& options, Clock& clock,
                                StopSignal& stop, const std::function<absl::Status()>& attempt);

template <typename T>
absl::StatusOr<T> RetryOnUnavailable(const std::string& what, const RetryOptions& options,
                                     Clock& clock, StopSignal& stop,
                                     const std::function<absl::StatusOr<T>()>& attempt) {
  absl::StatusOr<T> result = absl::UnknownError("not attempted");
  absl::Status status = RetryOnUnavailable(what, options, clock, stop, [&]() -> absl::Status {
    result = attempt();
    return result.status();
  });
  if (!status.ok()) return status;
  return result;
}

}  // namespace internal
}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_INTERNAL_RETRY_H_
