#include "server/coordinator/wait_tracker.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"

namespace pstrain {
namespace coordinator {

std::string FormatWaitAge(absl::Duration age) {
  const int64_t seconds = age < absl::ZeroDuration() ? 0 : absl::ToInt64Seconds(age);
  if (seconds < 60) return absl::StrCat(seconds, "s");
  if (seconds < 3600) return absl::StrFormat("%dm%02ds", seconds / 60, seconds % 60);
  return absl::StrFormat("%dh%02dm", seconds / 3600, (seconds % 3600) / 60);
}

std::string FormatWait(absl::string_view what, absl::Time start, absl::Time now) {
  return absl::StrCat("waiting for ", what, " since ", FormatWaitAge(now - start));
}

WaitTracker::WaitTracker(Clock& clock, std::string what, absl::Time deadline,
                         WaitTrackerOptions options, Sink sink)
    : clock_(clock),
      start_(clock.Now()),
      deadline_(deadline),
      options_(options),
      sink_(sink != nullptr ? std::move(sink)
                            : [](const std::string& message) { LOG(WARNING) << message; }),
      what_(std::move(what)),
      next_report_(start_ + options.first_report_after) {}

void WaitTracker::SetWhat(std::string what) {
  absl::MutexLock lock(&mu_);
  what_ = std::move(what);
}

absl::Status WaitTracker::Check() {
  const absl::Time now = clock_.Now();
  std::string message;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (now >= deadline_) {
      status = absl::DeadlineExceededError(
          absl::StrCat("gave up waiting for ", what_, " after ", FormatWaitAge(now - start_)));
      if (expired_reported_) return status;
      expired_reported_ = true;
      message = std::string(status.message());
    } else if (now >= next_report_) {
      message = FormatWait(what_, start_, now);
      // From now, not from the missed due time: a loop that woke late must
      // not report several times in a row to catch up.
      next_report_ = now + options_.report_every;
    }
  }
  // Outside the lock: the sink may block on logging.
  if (!message.empty()) sink_(message);
  return status;
}

std::string WaitTracker::Waiting() {
  absl::MutexLock lock(&mu_);
  return absl::StrCat("waiting for ", what_);
}

std::string WaitTracker::Describe() {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  return FormatWait(what_, start_, now);
}

}  // namespace coordinator
}  // namespace pstrain
