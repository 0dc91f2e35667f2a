#ifndef PSTRAIN_SERVER_COORDINATOR_INTERNAL_RANGE_SET_H_
#define PSTRAIN_SERVER_COORDINATOR_INTERNAL_RANGE_SET_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace pstrain {
namespace coordinator {
namespace internal {

// A half-open range [begin, end) of record indices.
struct Range {
  int64_t begin = 0;
  int64_t end = 0;

  int64_t size() const { return end - begin; }
  friend bool operator==(const Range& a, const Range& b) {
    return a.begin == b.begin && a.end == b.end;
  }
};

// A set of record indices kept as disjoint, coalesced ranges in ascending
// order: adding [0, 5) and [5, 9) leaves [0, 9). Not thread-safe.
class RangeSet {
 public:
  // Adds [begin, end) if it overlaps nothing in the set and returns true;
  // returns false and changes nothing otherwise. An empty range is a no-op
  // that succeeds. Requires begin <= end.
  bool Add(Range range);

  // Whether any index of `range` is in the set.
  bool Overlaps(Range range) const;

  // The indices in [begin, end) that are not in the set, ascending.
  std::vector<Range> Gaps(Range within) const;

  // The ranges, ascending and coalesced.
  std::vector<Range> ranges() const;

  // How many indices the set holds.
  int64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }

 private:
  // begin -> end; no two ranges overlap or touch.
  std::map<int64_t, int64_t> ranges_;
  int64_t count_ = 0;
};

}  // namespace internal
}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_INTERNAL_RANGE_SET_H_
