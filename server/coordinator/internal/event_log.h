#ifndef PSTRAIN_SERVER_COORDINATOR_INTERNAL_EVENT_LOG_H_
#define PSTRAIN_SERVER_COORDINATOR_INTERNAL_EVENT_LOG_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/coordinator/internal/waiters.h"

namespace pstrain {
namespace coordinator {
namespace internal {

// An append-only sequence of events that any number of readers follow,
// each at its own position (a cursor: the number of the next event to
// read), until the log is closed. Only the newest `capacity` events are
// kept: a reader that falls further behind skips the older ones and is told
// how many. Thread-safe.
template <typename T>
class EventLog {
 public:
  struct Read {
    std::vector<T> events;
    // The cursor to read from next.
    uint64_t next = 0;
    // Events dropped before this reader got them.
    uint64_t skipped = 0;
    // The log is closed and `next` is its end: nothing more will come.
    bool closed = false;
    // Non-zero when there was nothing to read and the log is open: the
    // `wake` callback was registered under this id.
    uint64_t wait_id = 0;
  };

  // capacity >= 1.
  explicit EventLog(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Appends `event` and wakes waiting readers. Ignored once closed.
  void Append(T event) {
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return;
      events_.push_back(std::move(event));
      if (events_.size() > capacity_) {
        events_.pop_front();
        ++first_;
      }
    }
    waiters_.FireAll();
  }

  // No more events; waiting readers are woken to see it.
  void Close() {
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
    }
    waiters_.FireAll();
  }

  // The cursor just past the newest event: where a reader that wants only
  // future events starts.
  uint64_t end() const {
    absl::MutexLock lock(&mu_);
    return first_ + events_.size();
  }

  // Up to `max_events` events from `cursor`. When there are none and the log
  // is open, registers `wake`, which is called exactly once: on the next
  // Append or Close, or by CancelWait.
  Read ReadOrWait(uint64_t cursor, size_t max_events, std::function<void()> wake) {
    Read read;
    absl::MutexLock lock(&mu_);
    const uint64_t end = first_ + events_.size();
    if (cursor < first_) {
      read.skipped = first_ - cursor;
      cursor = first_;
    }
    cursor = std::min(cursor, end);
    while (cursor < end && read.events.size() < max_events) {
      read.events.push_back(events_[cursor - first_]);
      ++cursor;
    }
    read.next = cursor;
    if (read.events.empty()) {
      if (closed_) {
        read.closed = true;
      } else {
        read.wait_id = waiters_.Add(std::move(wake));
      }
    }
    return read;
  }

  // Calls the wake callback registered under `id` now, unless it was
  // called already.
  void CancelWait(uint64_t id) { waiters_.Fire(id); }

 private:
  const size_t capacity_;

  mutable absl::Mutex mu_;
  std::deque<T> events_ ABSL_GUARDED_BY(mu_);
  // The number of the oldest event kept.
  uint64_t first_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  Waiters waiters_;
};

}  // namespace internal
}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_INTERNAL_EVENT_LOG_H_
