#ifndef PSTRAIN_WORKER_OVERLAPPED_PUSH_H_
#define PSTRAIN_WORKER_OVERLAPPED_PUSH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/ps_client.h"

namespace pstrain {
namespace worker {

// A push left in flight while the compute thread goes on to pull the next
// batch's parameters. Async modes: the pull misses this update, one more
// step of staleness. Sync rounds a shard decides alone: the pull waits on
// the shard for the round the push joins, and is answered as that round
// is applied, without the round trip of a pull sent after the push's
// answer. Started and finished on the compute thread,
// with no thread of its own: the shards' answers wait on their sockets
// until Finish reads them, so a step wakes no other thread to push
// (ParameterServerClient::StartPush).
//
// Thread-compatible: the compute thread's.
class OverlappedPush {
 public:
  // `ps` is borrowed and must outlive this object; this object makes its
  // pushes, one at a time.
  explicit OverlappedPush(ParameterServerClient& ps);
  // Waits for the push in flight, if any, so that the gradients it borrows
  // may go.
  ~OverlappedPush();

  OverlappedPush(const OverlappedPush&) = delete;
  OverlappedPush& operator=(const OverlappedPush&) = delete;

  // Starts pushing `gradients`, which stay borrowed (and unchanged) until
  // Finish() returns. Requires !in_flight().
  void Start(const Gradients& gradients, std::vector<int64_t> base_versions, int64_t examples,
             PushOrigin origin);

  // Whether a push was started and not yet finished.
  bool in_flight() const { return ps_.push_in_flight(); }
  // Where the gradients of the push in flight came from.
  const PushOrigin& origin() const { return origin_; }

  // Waits for the push in flight and returns its outcome. Requires
  // in_flight().
  absl::StatusOr<PushSummary> Finish();

 private:
  ParameterServerClient& ps_;
  PushOrigin origin_;
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_OVERLAPPED_PUSH_H_
