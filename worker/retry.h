#ifndef PSTRAIN_WORKER_RETRY_H_
#define PSTRAIN_WORKER_RETRY_H_

// Retrying calls that fail with Unavailable, with exponential backoff and
// jitter, up to a deadline, saying what is waited for while it lasts.

#include <functional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "worker/clock.h"
#include "worker/random_source.h"

namespace pstrain {
namespace worker {

struct RetryOptions {
  // First pause after a failed attempt. Default 50 ms: a restarting peer is
  // usually back within a few hundred milliseconds.
  absl::Duration initial_backoff = absl::Milliseconds(50);
  // Pauses grow by `multiplier` up to this. Default 5 s: long enough not to
  // hammer a peer that is down, short enough to notice it is back soon.
  absl::Duration max_backoff = absl::Seconds(5);
  double multiplier = 2.0;
  // Each pause is drawn uniformly from [1 - jitter, 1] times the nominal
  // one, so that workers that failed together do not retry together.
  // Default 0.5; in [0, 1].
  double jitter = 0.5;
  // Give up when the next attempt would start after this much time since
  // the first. Default 5 minutes; InfiniteDuration retries until stopped.
  absl::Duration deadline = absl::Minutes(5);
  // A WARNING "waiting for ..." line is logged once a retry loop has lasted
  // this long, and again at most this often. Default 5 s.
  absl::Duration log_every = absl::Seconds(5);
};

// The pauses of one retry loop: nominal initial_backoff, then times
// multiplier, capped at max_backoff, each with jitter. Not thread-safe.
class Backoff {
 public:
  Backoff(const RetryOptions& options, RandomSource& random);

  // The pause before the next attempt.
  absl::Duration Next();

  // Starts over from initial_backoff (after a success).
  void Reset() { nominal_ = options_.initial_backoff; }

 private:
  const RetryOptions options_;
  RandomSource& random_;
  absl::Duration nominal_;
};

// Runs `attempt` until it returns something other than Unavailable, the
// retry deadline passes, or `*stop` (may be null) is notified, pausing with
// Backoff in between. `what` names the peer and call for log lines
// ("waiting for ps/1 (push 17) since 12s: ..."). Returns the last
// attempt's status; Cancelled if stopped during a pause; DeadlineExceeded
// (keeping the last error's message) once the deadline passes.
absl::Status RetryOnUnavailable(const std::string& what, const RetryOptions& options, Clock& clock,
                                RandomSource& random, const absl::Notification* stop,
                                const std::function<absl::Status()>& attempt);

// As above for calls that return a value.
template <typename T>
absl::StatusOr<T> RetryOnUnavailable(const std::string& what, const RetryOptions& options,
                                     Clock& clock, RandomSource& random,
                                     const absl::Notification* stop,
                                     const std::function<absl::StatusOr<T>()>& attempt) {
  absl::StatusOr<T> result = absl::UnknownError("not attempted");
  absl::Status status =
      RetryOnUnavailable(what, options, clock, random, stop, [&]() -> absl::Status {
        result = attempt();
        return result.status();
      });
  if (!status.ok()) return status;
  return result;
}

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_RETRY_H_
