#ifndef PSTRAIN_SERVER_PS_PUSH_ASSEMBLER_H_
#define PSTRAIN_SERVER_PS_PUSH_ASSEMBLER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/net/shared_segment.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/parameter_shard.h"
#include "server/ps/shard_metrics.h"

namespace pstrain {

struct PushAssemblerOptions {
  // Gradient bytes being assembled at once, over every push. A push that
  // would go past it is refused with ResourceExhausted (and the worker
  // retries later), which bounds memory when many workers push at once.
  // Default 4 GiB.
  int64_t max_pending_bytes = int64_t{4} << 30;
  // A push whose parts stop arriving for this long is dropped when another
  // push starts. Default 5 minutes.
  absl::Duration abandon_after = absl::Minutes(5);
  // Largest num_parts accepted. Default 64.
  int max_parts = 64;
};

namespace internal {
class PendingPush;
}  // namespace internal

class PushAssembler;

// The messages of one part of a push as one stream receives them (one tag),
// from the first to end_of_push. Not thread-safe: a stream feeds its parts
// one message at a time. Parts of the same push on other streams proceed in
// parallel.
class PushPart {
 public:
  ~PushPart();
  PushPart(const PushPart&) = delete;
  PushPart& operator=(const PushPart&) = delete;

  struct Step {
    // An answer for the client, at most one per part: REJECTED as soon as
    // the part fails (later messages of the part are read and dropped),
    // else after end_of_push: PART_RECEIVED or the push's outcome.
    std::optional<PushResult> reply;
    // The part has ended (end_of_push seen); drop this object.
    bool finished = false;
  };

  // Adds one message of this part, the first one included. The tensors'
  // bytes are moved out of `message` (kept until the push is applied).
  // Gradients whose bytes lie in a shared-memory lane (DenseTensor.shared,
  // SparseRows.shared) are read in `lane`, its segment, which the caller
  // has checked holds them; float32 bytes are borrowed there, not copied,
  // until the push is applied or fails (the worker keeps them unchanged
  // until then: parameter_server.proto, PushPullRequest.lane).
  Step Add(PushRequest& message, const std::shared_ptr<const SharedSegment>& lane = nullptr);

  // Whether `message` belongs to this part (same push id and part).
  bool Matches(const PushRequest& message) const;

  // The stream ended before end_of_push: the whole push fails (Aborted,
  // its other parts answer REJECTED) and must be retried.
  void Abandon();

 private:
  friend class PushAssembler;
  PushPart(PushAssembler& assembler, const PushRequest& first,
           std::shared_ptr<internal::PendingPush> push, absl::Status failure,
           std::optional<PushReply> decided);

  Step Fail(absl::Status status);
  PushResult Result(const PushReply& reply) const;

  PushAssembler& assembler_;
  const PushId id_;
  const int part_;
  std::shared_ptr<internal::PendingPush> push_;  // null when failed at start
  // Set once the part has failed; the client got REJECTED.
  absl::Status failure_;
  bool answered_ = false;
  bool ended_ = false;
  // A retry of an already decided push: its data is dropped.
  std::optional<PushReply> decided_;
};

// Reassembles pushes that arrive as many messages -- tensors in chunks,
// split into parts over several streams -- and hands each complete push to
// its ParameterShard once. Validates every piece as it arrives (variable,
// dtype, shape, chunk bounds and overlaps, sizes) so that a bad push is
// refused before it is buffered whole. Thread-safe.
class PushAssembler {
 public:
  PushAssembler(const PushAssemblerOptions& options, Clock& clock, ShardMetrics& metrics);
  ~PushAssembler();

  PushAssembler(const PushAssembler&) = delete;
  PushAssembler& operator=(const PushAssembler&) = delete;

  // Starts a part with its first message; `shard` is the job the message
  // names, or why it cannot be had (FailedPrecondition: the job is not
  // running here). A part that fails at once answers REJECTED at its first
  // Add. Pass the first message to Add next.
  std::unique_ptr<PushPart> StartPart(absl::StatusOr<std::shared_ptr<ParameterShard>> shard,
                                      const PushRequest& first);

  // Pushes being assembled (for tests and metrics).
  int pending_pushes() const;
  int64_t pending_bytes() const;

 private:
  friend class PushPart;
  friend class internal::PendingPush;
  using Key = std::tuple<std::string, int32_t, uint64_t, uint64_t>;

  // Reserves `bytes` of the budget; ResourceExhausted SHARD_BUSY past it.
  absl::Status Reserve(int64_t bytes);
  void Release(int64_t bytes);
  // Drops the table's entry for `push` if it is still that push.
  void Forget(const internal::PendingPush* push);

  const PushAssemblerOptions options_;
  Clock& clock_;
  ShardMetrics& metrics_;

  mutable absl::Mutex mu_;
  std::map<Key, std::shared_ptr<internal::PendingPush>> pending_ ABSL_GUARDED_BY(mu_);
  int64_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_PUSH_ASSEMBLER_H_
