#ifndef PSTRAIN_WORKER_TESTING_FAKE_CLOCK_H_
#define PSTRAIN_WORKER_TESTING_FAKE_CLOCK_H_

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "worker/clock.h"

namespace pstrain {
namespace worker {

// A Clock whose sleeps return at once and move its time forward by the
// time slept, so a test sees how long a retry loop would have waited
// without waiting. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1000000))
      : now_ns_(absl::ToUnixNanos(start)) {}

  absl::Time Now() override { return absl::FromUnixNanos(now_ns_.load()); }

  bool SleepFor(absl::Duration duration, const absl::Notification* stop) override {
    if (stop != nullptr && stop->HasBeenNotified()) return true;
    Advance(duration);
    slept_ns_.fetch_add(absl::ToInt64Nanoseconds(duration));
    return stop != nullptr && stop->HasBeenNotified();
  }

  void Advance(absl::Duration d) { now_ns_.fetch_add(absl::ToInt64Nanoseconds(d)); }

  // Total time spent in SleepFor.
  absl::Duration slept() const { return absl::Nanoseconds(slept_ns_.load()); }

 private:
  std::atomic<int64_t> now_ns_;
  std::atomic<int64_t> slept_ns_{0};
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_TESTING_FAKE_CLOCK_H_
