#ifndef PSTRAIN_WORKER_INTERNAL_PUSH_PULL_PLAN_H_
#define PSTRAIN_WORKER_INTERNAL_PUSH_PULL_PLAN_H_

// How one shard's share of a pull or a push is cut into messages and spread
// over streams. Pure functions over the slicer, the batch's row ids and the
// gradients; the client sends what they build.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/model/parameters.h"
#include "protos/parameter_server.pb.h"
#include "worker/internal/outgoing_request.h"
#include "worker/shard_slicer.h"

namespace pstrain {
namespace worker {
namespace internal {

// For each table (by name), the positions in its id list of the ids each
// shard holds: positions[name][shard].
using RowPositions = absl::flat_hash_map<std::string, std::vector<std::vector<int32_t>>>;

// One stream's share of a shard's pull.
struct PullLane {
  // Names, ranges and row selections; job id, min_version and wait_ms are
  // the caller's to set.
  PullRequest request;
  // Bytes of each dense variable this lane reads (whole or in ranges).
  absl::flat_hash_map<std::string, int64_t> dense_bytes;
  // For each table this lane reads rows of: the positions of those rows in
  // the table's id list, in the order asked.
  absl::flat_hash_map<std::string, const std::vector<int32_t>*> row_positions;
  int64_t bytes = 0;
};

// Splits the pull of shard `shard` -- its dense variables whole and, for
// each table of `rows`, the ids it holds -- over at most `max_lanes`
// streams: one when it is under parallel_min_bytes, else dense variables
// larger than a lane's share cut into element ranges, the rest spread by
// bytes. A shard with nothing to read gets an empty selection of the first
// table, which reads nothing but still says (and waits for) its version.
// `positions` must outlive the lanes. Returns no lanes for a shard the
// slicer does not involve.
std::vector<PullLane> PlanShardPull(const ShardSlicer& slicer, int shard, const RowIds& rows,
                                    const RowPositions& positions, int max_lanes,
                                    int64_t parallel_min_bytes);

// The messages of shard `shard`'s push, per part: its dense gradients cut
// into chunks of at most chunk_bytes, its rows of each table gradient in
// pieces of at most chunk_bytes, packed into messages of about chunk_bytes
// and spread by bytes over up to max_parts parts (one when the push is
// under parallel_min_bytes). Every message carries every field of
// `header` (job, id, base version, examples, generation, membership
// deadline, origin) but its gradients and, with several parts, num_parts
// and its part; the last of each part has end_of_push. `*bytes` gets the gradient
// bytes. Dense gradient bytes are borrowed from `gradients` (see
// OutgoingRequest), which must outlive the messages until they are
// serialised; rows are copied. `narrowed_dense`, when not null, holds the
// dense gradients to send in place of gradients.dense (bfloat16 ones,
// NarrowedGradients), borrowed likewise. InvalidArgument: a gradient of a
// variable the slicer does not know, of the wrong shape, or of a dtype
// other than float32 (or bfloat16 for dense ones).
absl::StatusOr<std::vector<std::vector<OutgoingRequest>>> BuildShardPush(
    const ShardSlicer& slicer, int shard, const Gradients& gradients, const RowPositions& positions,
    const PushRequest& header, int max_parts, int64_t parallel_min_bytes, int64_t chunk_bytes,
    int64_t* bytes, const absl::flat_hash_map<std::string, Tensor>* narrowed_dense = nullptr);

// positions[name][shard] for every table of `rows` that the slicer knows.
RowPositions SliceRows(const ShardSlicer& slicer, const RowIds& rows);

// As SliceRows, for the rows of every table gradient.
RowPositions SliceGradientRows(const ShardSlicer& slicer, const Gradients& gradients);

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_PUSH_PULL_PLAN_H_
