#include "common/net/lane_region.h"

namespace pstrain {

bool RegionFits(const LaneRegion& region, int64_t segment_size) {
  return region.offset() >= 0 && region.size() >= 0 && region.offset() <= segment_size &&
         region.size() <= segment_size - region.offset();
}

bool RegionHolds(const LaneRegion& region, const SharedBytes& bytes) {
  if (region.offset() < 0 || region.size() < 0 || bytes.offset() < region.offset() ||
      bytes.size() < 0) {
    return false;
  }
  const int64_t from = bytes.offset() - region.offset();
  return from <= region.size() && bytes.size() <= region.size() - from;
}

}  // namespace pstrain
