#include "bench/sim/member_schedule.h"

namespace pstrain {
namespace bench {

absl::Duration SpreadOffset(int member, int members, absl::Duration period) {
  if (members <= 1 || period <= absl::ZeroDuration()) return absl::ZeroDuration();
  return period * (static_cast<double>(member % members) / members);
}

void MemberSchedule::Add(int member, MemberEvent kind, absl::Time first, absl::Duration period) {
  heap_.push(Entry{first, period, member, kind, added_++});
}

std::optional<DueEvent> MemberSchedule::PopDue(absl::Time now) {
  if (heap_.empty() || heap_.top().due > now) return std::nullopt;
  Entry entry = heap_.top();
  heap_.pop();
  const DueEvent event{entry.due, entry.member, entry.kind};
  entry.due += entry.period;
  if (entry.due <= now) {
    // More than a period late: skip to the first occurrence after now.
    absl::Duration remainder;
    const int64_t missed = absl::IDivDuration(now - entry.due, entry.period, &remainder) + 1;
    entry.due += entry.period * missed;
    skipped_ += missed;
  }
  heap_.push(entry);
  return event;
}

absl::Time MemberSchedule::NextDue() const {
  return heap_.empty() ? absl::InfiniteFuture() : heap_.top().due;
}

}  // namespace bench
}  // namespace pstrain
