#include "server/coordinator/internal/range_set.h"

#include <algorithm>
#include <iterator>

#include "glog/logging.h"

namespace pstrain {
namespace coordinator {
namespace internal {

bool RangeSet::Add(Range range) {
  CHECK_LE(range.begin, range.end);
  if (range.size() == 0) return true;
  if (Overlaps(range)) return false;
  count_ += range.size();
  // Merge with a neighbour that ends where this begins...
  auto next = ranges_.lower_bound(range.begin);
  if (next != ranges_.begin()) {
    auto prev = std::prev(next);
    if (prev->second == range.begin) {
      range.begin = prev->first;
      ranges_.erase(prev);
    }
  }
  // ...and one that begins where this ends.
  next = ranges_.find(range.end);
  if (next != ranges_.end()) {
    range.end = next->second;
    ranges_.erase(next);
  }
  ranges_[range.begin] = range.end;
  return true;
}

bool RangeSet::Overlaps(Range range) const {
  if (range.size() <= 0) return false;
  // The first range that begins at or after range.begin, and the one before.
  auto next = ranges_.lower_bound(range.begin);
  if (next != ranges_.end() && next->first < range.end) return true;
  if (next != ranges_.begin() && std::prev(next)->second > range.begin) return true;
  return false;
}

std::vector<Range> RangeSet::Gaps(Range within) const {
  std::vector<Range> gaps;
  int64_t cursor = within.begin;
  for (const auto& [begin, end] : ranges_) {
    if (end <= cursor) continue;
    if (begin >= within.end) break;
    if (begin > cursor) gaps.push_back({cursor, begin});
    cursor = std::max(cursor, end);
  }
  if (cursor < within.end) gaps.push_back({cursor, within.end});
  return gaps;
}

std::vector<Range> RangeSet::ranges() const {
  std::vector<Range> out;
  out.reserve(ranges_.size());
  for (const auto& [begin, end] : ranges_) out.push_back({begin, end});
  return out;
}

}  // namespace internal
}  // namespace coordinator
}  // namespace pstrain
