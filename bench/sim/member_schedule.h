#ifndef PSTRAIN_BENCH_SIM_MEMBER_SCHEDULE_H_
#define PSTRAIN_BENCH_SIM_MEMBER_SCHEDULE_H_

#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

#include "absl/time/time.h"

namespace pstrain {
namespace bench {

// What a simulated member does when its time comes.
enum class MemberEvent {
  kHeartbeat,  // a heartbeat (or, unregistered, a registration)
  kStep,       // a training step: pull, push, and the lease and progress calls around it
};

struct DueEvent {
  absl::Time due;
  int member = 0;
  MemberEvent kind = MemberEvent::kHeartbeat;
};

// Where member `member` of `members` starts within `period`: spread evenly,
// so that thousands of members beat at an even rate instead of all at
// once. Zero for a single member or a zero period.
absl::Duration SpreadOffset(int member, int members, absl::Duration period);

// The recurring events of many members in one timer heap: a few driver
// threads pop what is due instead of a thread per member sleeping. Fixed
// rate: each event is re-armed a period after it was due, not after it
// ran, so a slow call does not slow its member's beat; a driver that fell
// more than a period behind skips the occurrences it missed (counted in
// skipped()) rather than firing them in a burst. Not thread-safe; the
// driver guards it.
class MemberSchedule {
 public:
  // A recurring event of `member`: first at `first`, then every `period`
  // (> 0).
  void Add(int member, MemberEvent kind, absl::Time first, absl::Duration period);

  // The earliest event if it is due at `now` (due <= now), re-armed for
  // its next occurrence after now; nullopt when nothing is due.
  std::optional<DueEvent> PopDue(absl::Time now);

  // When the earliest event is due; InfiniteFuture when there is none.
  absl::Time NextDue() const;

  size_t size() const { return heap_.size(); }
  // Occurrences skipped because the driver was more than a period late.
  int64_t skipped() const { return skipped_; }

 private:
  struct Entry {
    absl::Time due;
    absl::Duration period;
    int member;
    MemberEvent kind;
    // Ties go to the member added first, so the order is deterministic.
    int64_t order;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.due != b.due) return a.due > b.due;
      return a.order > b.order;
    }
  };

  std::priority_queue<Entry, std::vector<Entry>, Later> heap_;
  int64_t added_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_MEMBER_SCHEDULE_H_
