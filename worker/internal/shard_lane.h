#ifndef PSTRAIN_WORKER_INTERNAL_SHARD_LANE_H_
#define PSTRAIN_WORKER_INTERNAL_SHARD_LANE_H_

// The worker's end of a shared-memory lane to one shard
// (parameter_server.proto, OpenLane): a segment this process creates and
// hands to the shard, cut into regions that exchanges own while their
// tensor bytes lie there, and the lane's connection, on which the stream
// sends the requests of exchanges placed in the lane and reads their
// answers (worker/internal/shard_stream.h). Only tensor bytes (dense
// values, rows' values) move through the segment.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/net/shared_segment.h"
#include "common/net/unique_fd.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.pb.h"
#include "worker/internal/outgoing_request.h"

namespace pstrain {
namespace worker {
namespace internal {

class ShardLane;
class LaneOpening;

// A region of a lane's segment that one exchange owns: the bytes it sends
// or the room its answers fill. Goes back to its lane when the last holder
// (the exchange, the answers read from it) lets go. Thread-safe.
class SegmentRegion {
 public:
  ~SegmentRegion();
  SegmentRegion(const SegmentRegion&) = delete;
  SegmentRegion& operator=(const SegmentRegion&) = delete;

  // The lane and the region's place in its segment, as requests name it.
  const LaneRegion& where() const { return where_; }

  // The bytes `at` (offsets in the segment), or null when they do not lie
  // within this region.
  const char* Find(const SharedBytes& at) const;

 private:
  friend class ShardLane;
  SegmentRegion(std::shared_ptr<ShardLane> lane, LaneRegion where)
      : lane_(std::move(lane)), where_(std::move(where)) {}

  const std::shared_ptr<ShardLane> lane_;
  const LaneRegion where_;
};

// Thread-safe.
class ShardLane : public std::enable_shared_from_this<ShardLane> {
 public:
  using Opened = std::function<void(absl::StatusOr<std::shared_ptr<ShardLane>>)>;

  // Opens a lane to the shard behind `channel` with a segment of
  // `segment_bytes`, without blocking: `opened` runs on a gRPC thread once
  // the lane is open or could not be. The caller must be able to run
  // `opened` until it has run, and hold `channel` until then too, so that
  // the channel is not released from inside one of its own callbacks
  // (`opened` runs once the opening holds no reference to it). Errors:
  //   FailedPrecondition: the shard is on another host or in another
  //     network namespace, has lanes off, or refused the segment.
  //   Unimplemented: the shard does not know lanes.
  //   Unavailable: the shard or its socket cannot be reached.
  //   Cancelled: the returned function was called first.
  // Returns a function that cancels the opening (harmless once it ended).
  static std::function<void()> OpenAsync(std::shared_ptr<grpc::Channel> channel,
                                         int64_t segment_bytes, Opened opened);

  ShardLane(const ShardLane&) = delete;
  ShardLane& operator=(const ShardLane&) = delete;

  // Places one exchange in the lane: copies `requests` into *placed with
  // each gradient's bytes (a dense tensor's, a rows gradient's values)
  // moved into a region of the segment (DenseTensor.shared,
  // SparseRows.shared) and every message naming the region
  // (PushPullRequest.lane). A pull sets aside `answer_bytes` for its answers.
  // Returns the region, which must be held until the exchange's answers
  // have been read; null when no free region is that large or there is
  // nothing to place (send `requests` as they are).
  std::shared_ptr<SegmentRegion> Place(const std::vector<OutgoingRequest>& requests,
                                       int64_t answer_bytes, std::vector<OutgoingRequest>* placed);

  // Bytes of the segment held by regions now.
  int64_t used_bytes() const;

  // The lane's connection to the shard, to carry requests and answers; the
  // shard drops the lane when it closes. Invalid once taken.
  UniqueFd TakeSocket();

 private:
  friend class SegmentRegion;
  friend class LaneOpening;
  ShardLane(std::string id, std::unique_ptr<SharedSegment> segment, UniqueFd socket);

  // Hands a new segment to the shard on the socket named in `grant`.
  static absl::StatusOr<std::shared_ptr<ShardLane>> Connect(const OpenLaneResponse& grant,
                                                            int64_t segment_bytes);
  // The offset of a free run of `bytes` (aligned), or -1.
  int64_t Allocate(int64_t bytes);
  void Free(int64_t offset);

  // Constant after construction.
  const std::string id_;
  const std::unique_ptr<SharedSegment> segment_;
  mutable absl::Mutex mu_;
  // Until taken; closing it closes the lane.
  UniqueFd socket_ ABSL_GUARDED_BY(mu_);
  // Regions in use: offset -> bytes.
  std::map<int64_t, int64_t> used_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_SHARD_LANE_H_
