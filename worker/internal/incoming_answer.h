#ifndef PSTRAIN_WORKER_INTERNAL_INCOMING_ANSWER_H_
#define PSTRAIN_WORKER_INTERNAL_INCOMING_ANSWER_H_

// A PushPullResponse as it came off the stream, parsed without copying the
// values of its dense pieces: they stay in gRPC's slices until the client
// copies them, once, into the pulled tensors.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "protos/parameter_server.pb.h"
#include "worker/internal/shard_lane.h"

namespace pstrain {
namespace worker {
namespace internal {

// Thread-compatible; movable.
class IncomingAnswer {
 public:
  // Parses `bytes` (a serialised PushPullResponse). Every field is parsed
  // as protobuf would, except that the data of each dense value of
  // pull().values() is left empty and kept where it lies.
  // InvalidArgument: the bytes are not a PushPullResponse.
  static absl::StatusOr<IncomingAnswer> Parse(const grpc::ByteBuffer& bytes);

  const PushPullResponse& message() const { return message_; }

  // Takes the values this answer placed in its exchange's lane region
  // (DenseTensor.shared, SparseRows.shared) from `region`, which it holds
  // until it is destroyed. InvalidArgument: a value outside the region.
  absl::Status ReadSharedFrom(std::shared_ptr<const SegmentRegion> region);

  // The size of the data of pull().values(value) (a dense value), wherever
  // it lies: kept apart, in the lane, or in its `data` field.
  int64_t DenseDataSize(int value) const;

  // Copies that data to `to` (DenseDataSize bytes).
  void CopyDenseData(int value, char* to) const;

  // The values of pull().values(value) (rows), in the lane or in the
  // message; valid while this answer is.
  absl::string_view RowsValues(int value) const;

 private:
  struct Kept {
    int value = 0;
    size_t slice = 0;   // first slice
    size_t offset = 0;  // within it
    int64_t size = 0;
  };
  const Kept* FindKept(int value) const;

  // A dense value's bytes in a lane region.
  struct Shared {
    int value = 0;
    const char* data = nullptr;
    int64_t size = 0;
  };
  const Shared* FindShared(int value) const;

  PushPullResponse message_;
  std::vector<grpc::Slice> slices_;
  std::shared_ptr<const SegmentRegion> region_;
  std::vector<Shared> shared_;
  // By increasing value.
  std::vector<Kept> kept_;
};

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_INCOMING_ANSWER_H_
