#ifndef PSTRAIN_WORKER_INTERNAL_RECORD_RANGES_H_
#define PSTRAIN_WORKER_INTERNAL_RECORD_RANGES_H_

// Ranges of a lease's records, as the worker hands them back untrained.

#include <cstdint>
#include <vector>

#include "protos/coordinator.pb.h"

namespace pstrain {
namespace worker {
namespace internal {

RecordRange MakeRange(int64_t begin, int64_t end);

// Sorted, with touching ranges merged and empty ones dropped.
std::vector<RecordRange> Coalesce(std::vector<RecordRange> ranges);

// The records in `ranges`.
int64_t CountRecords(const std::vector<RecordRange>& ranges);

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_RECORD_RANGES_H_
