#ifndef PSTRAIN_SERVER_PS_PULL_READER_H_
#define PSTRAIN_SERVER_PS_PULL_READER_H_

// Answers a PullRequest from a ParameterShard: validation, and the values
// packed into messages of bounded size.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/parameter_shard.h"

namespace pstrain {

// Checks every name, range and row selection of `request` against the
// shard, and returns the bytes of values the answer will carry.
// NotFound: a variable the shard does not hold.
// InvalidArgument: a table named in `names` or `ranges`, a range outside
//   its variable, a row id out of range or held by another shard, a scalar
//   read by rows, a negative min_version or wait_ms, nothing to read, a
//   dense_dtype other than float32 or bfloat16.
absl::StatusOr<int64_t> ValidatePull(const ParameterShard& shard, const PullRequest& request);

// The answer to a validated pull, read one message at a time: each message
// holds at most max_chunk_bytes of values (at least one element or row), a
// dense variable that does not fit is split into TensorChunks, and the last
// message has end_of_pull. Each message is read when asked for and carries
// the version it was read at, so a stream sends one chunk while the next is
// read, and holds one chunk per pull in memory. Not thread-safe.
class PullCursor {
 public:
  PullCursor(std::shared_ptr<const ParameterShard> shard, PullRequest request,
             int64_t max_chunk_bytes);

  bool done() const { return done_; }

  // The kind of piece a ValueDestination is asked room for.
  enum class PieceKind {
    kDense,  // DenseTensor.data
    kRows,   // SparseRows.values
  };
  // Where Next may put a piece's values instead of its message: given the
  // piece's index in out->values(), its kind and its number of floats,
  // room for them, or null to keep them in the message. Lets a sender read
  // values straight into the buffers it hands to the transport.
  using ValueDestination = std::function<float*(int value, PieceKind kind, int64_t count)>;

  // Replaces *out with the next message. Requires !done(). With a
  // destination, the pieces it gives room for have empty `data` or
  // `values`.
  absl::Status Next(PullResponse* out, const ValueDestination& destination = nullptr);

 private:
  // Fills as much of the current item as fits in `room` bytes into *out;
  // returns the bytes used.
  absl::StatusOr<int64_t> Fill(int64_t room, PullResponse* out,
                               const ValueDestination& destination);

  const std::shared_ptr<const ParameterShard> shard_;
  const PullRequest request_;
  const int64_t max_chunk_bytes_;
  // Position: item index over names, then ranges, then rows; and the
  // element (dense) or id (rows) reached within it.
  int item_ = 0;
  int64_t at_ = 0;
  bool done_ = false;
};

// All messages of a validated pull at once, each with `version`.
absl::StatusOr<std::vector<PullResponse>> ReadPull(std::shared_ptr<const ParameterShard> shard,
                                                   const PullRequest& request,
                                                   int64_t max_chunk_bytes);

// Bytes of values carried in `response`'s own fields (not those placed
// elsewhere by a ValueDestination).
int64_t InlineValueBytes(const PullResponse& response);

// When a pull asked at `now` stops waiting for its min_version: after its
// wait_ms, at most `max_wait`.
absl::Time PullDeadline(absl::Time now, const PullRequest& request, absl::Duration max_wait);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_PULL_READER_H_
