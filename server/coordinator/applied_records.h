#ifndef PSTRAIN_SERVER_COORDINATOR_APPLIED_RECORDS_H_
#define PSTRAIN_SERVER_COORDINATOR_APPLIED_RECORDS_H_

// The training records the shards applied pushes of, per data lease, as
// their push ledgers (protos/parameter_server.proto PushLedger) say: what
// counts as trained when a worker is lost, and what a checkpoint's data
// position must count as finished to agree with its parameters.

#include <cstdint>
#include <map>
#include <vector>

#include "absl/types/span.h"
#include "protos/checkpoint.pb.h"
#include "protos/parameter_server.pb.h"
#include "server/coordinator/internal/range_set.h"

namespace pstrain {
namespace coordinator {

// One lease's applied records over every shard.
struct LeaseRecords {
  int32_t epoch = 0;
  // Ascending and coalesced.
  std::vector<internal::Range> applied;
};

// Lease id -> records.
using AppliedRecords = std::map<int64_t, LeaseRecords>;

// The union over shards of each lease's applied records. A push applied on
// some shards and not (yet) on others counts: training its records again
// would apply them twice on the shards that have it.
AppliedRecords MergeLedgers(absl::Span<const PushLedger> ledgers);

// `position` with the applied records of leases of its epoch added to
// `finished`, and those of the next epoch to `next_epoch_finished`
// (coalesced; records already finished are not counted twice). Leases of
// older epochs are ignored: their epoch is finished.
DataPosition WithAppliedRecords(const DataPosition& position, const AppliedRecords& applied);

// The records of `lease` (clipped to [begin, end)) in `applied`, or none.
std::vector<RecordRange> AppliedWithin(const AppliedRecords& applied, int64_t lease_id,
                                       int64_t begin, int64_t end);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_APPLIED_RECORDS_H_
