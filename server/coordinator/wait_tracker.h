#ifndef PSTRAIN_SERVER_COORDINATOR_WAIT_TRACKER_H_
#define PSTRAIN_SERVER_COORDINATOR_WAIT_TRACKER_H_

// Every wait in the coordinator has a deadline and, while it runs long, says
// what it waits for and since when ("waiting for ps/1 since 12s"), so that a
// stuck job explains itself in the log instead of hanging silently.

#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace pstrain {
namespace coordinator {

// A wait's age for people: "0s", "12s", "3m04s", "2h05m". Negative ages
// (a start in the future) read as "0s".
std::string FormatWaitAge(absl::Duration age);

// "waiting for <what> since <age>", the age being now - start.
std::string FormatWait(absl::string_view what, absl::Time start, absl::Time now);

struct WaitTrackerOptions {
  // Quiet this long before the first message. Default 5s: short waits are
  // normal (a worker registering, a round filling) and would flood the log.
  absl::Duration first_report_after = absl::Seconds(5);
  // Then at most one message per this interval. Default 10s: often enough to
  // see a stuck wait within a probe period, rarely enough to stay readable.
  absl::Duration report_every = absl::Seconds(10);
};

// One wait: what it waits for, since when, until when. The waiting loop calls
// Check() whenever it wakes; Check() reports through the sink at most once
// per report_every and fails once the deadline has passed. Thread-safe.
class WaitTracker {
 public:
  // Receives each report. The default logs it with glog at WARNING.
  using Sink = std::function<void(const std::string& message)>;

  // The wait starts at clock.Now(). `deadline` may be
  // absl::InfiniteFuture() only for waits a user ends (a queued job).
  WaitTracker(Clock& clock, std::string what, absl::Time deadline, WaitTrackerOptions options = {},
              Sink sink = nullptr);

  WaitTracker(const WaitTracker&) = delete;
  WaitTracker& operator=(const WaitTracker&) = delete;

  // Narrows or changes what the wait is for ("ps/0, ps/1" -> "ps/1") without
  // restarting its age.
  void SetWhat(std::string what);

  // OK while the deadline has not passed, reporting "waiting for <what> since
  // <age>" when a report is due. DeadlineExceeded once Now() >= deadline:
  // "gave up waiting for <what> after <age>" (reported once, then returned
  // on every later call).
  absl::Status Check();

  // "waiting for <what> since <age>" as of now, for status pages.
  std::string Describe();
  // "waiting for <what>", which changes only when what is waited for does.
  std::string Waiting();

  absl::Time start() const { return start_; }
  absl::Time deadline() const { return deadline_; }

 private:
  // Constant after construction.
  Clock& clock_;
  const absl::Time start_;
  const absl::Time deadline_;
  const WaitTrackerOptions options_;
  const Sink sink_;

  absl::Mutex mu_;
  std::string what_ ABSL_GUARDED_BY(mu_);
  // When the next report is due.
  absl::Time next_report_ ABSL_GUARDED_BY(mu_);
  bool expired_reported_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_WAIT_TRACKER_H_
