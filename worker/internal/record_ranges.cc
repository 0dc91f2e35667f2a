#include "worker/internal/record_ranges.h"

#include <algorithm>

namespace pstrain {
namespace worker {
namespace internal {

RecordRange MakeRange(int64_t begin, int64_t end) {
  RecordRange range;
  range.set_begin(begin);
  range.set_end(end);
  return range;
}

std::vector<RecordRange> Coalesce(std::vector<RecordRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const RecordRange& a, const RecordRange& b) { return a.begin() < b.begin(); });
  std::vector<RecordRange> out;
  for (const RecordRange& r : ranges) {
    if (r.end() <= r.begin()) continue;
    if (!out.empty() && out.back().end() >= r.begin()) {
      out.back().set_end(std::max(out.back().end(), r.end()));
    } else {
      out.push_back(r);
    }
  }
  return out;
}

int64_t CountRecords(const std::vector<RecordRange>& ranges) {
  int64_t records = 0;
  for (const RecordRange& r : ranges) records += r.end() - r.begin();
  return records;
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
