#ifndef PSTRAIN_COMMON_NET_LANE_REGION_H_
#define PSTRAIN_COMMON_NET_LANE_REGION_H_

// Bounds of shared-memory lane regions (parameter_server.proto, LaneRegion),
// checked alike by the shard, which must never touch memory outside what a
// worker named, and by the worker, which must never read outside what an
// exchange owns. Every figure comes from a peer: the checks hold for any
// int64 values, overflow included.

#include <cstdint>

#include "protos/parameter_server.pb.h"
#include "protos/tensor.pb.h"

namespace pstrain {

// Whether `region` lies within a segment of `segment_size` bytes.
bool RegionFits(const LaneRegion& region, int64_t segment_size);

// Whether `bytes` (offsets in the segment) lie within `region`.
bool RegionHolds(const LaneRegion& region, const SharedBytes& bytes);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_LANE_REGION_H_
