#ifndef PSTRAIN_COMMON_RETRY_BACKOFF_H_
#define PSTRAIN_COMMON_RETRY_BACKOFF_H_

// The pauses between attempts of a call that may succeed if repeated.

#include "absl/time/time.h"
#include "common/random/random_source.h"

namespace pstrain {

struct RetryOptions {
  // First pause after a failed attempt. Default 50 ms: a restarting peer is
  // usually back within a few hundred milliseconds.
  absl::Duration initial_backoff = absl::Milliseconds(50);
  // Pauses grow by `multiplier` up to this. Default 5 s: long enough not to
  // hammer a peer that is down, short enough to notice it is back soon.
  absl::Duration max_backoff = absl::Seconds(5);
  double multiplier = 2.0;
  // Each pause is drawn uniformly from [1 - jitter, 1] times the nominal
  // one, so that processes that failed together do not retry together.
  // Default 0.5; in [0, 1].
  double jitter = 0.5;
  // Give up when the next attempt would start after this much time since
  // the first. Default 5 minutes; InfiniteDuration retries until stopped.
  absl::Duration deadline = absl::Minutes(5);
  // What a loop that gives up at the deadline returns: DeadlineExceeded
  // (default), or, when false, the last attempt's Unavailable, for callers
  // that tell an unreachable peer from a slow one by the code. Either way
  // the message says how long and how many attempts.
  bool give_up_as_deadline_exceeded = true;
  // A WARNING "waiting for ..." line is logged once a retry loop has lasted
  // this long, and again at most this often. Default 5 s.
  absl::Duration log_every = absl::Seconds(5);
};

// The pauses of one retry loop: nominal initial_backoff, then times
// multiplier, capped at max_backoff, each with jitter. Not thread-safe.
class Backoff {
 public:
  // `random` is borrowed and must outlive the Backoff.
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

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_RETRY_BACKOFF_H_
