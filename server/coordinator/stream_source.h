#ifndef PSTRAIN_SERVER_COORDINATOR_STREAM_SOURCE_H_
#define PSTRAIN_SERVER_COORDINATOR_STREAM_SOURCE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/status.h"

namespace pstrain {
namespace coordinator {

// Where the messages of a server stream (WatchJob, WatchCheckpoints) come
// from, without gRPC: the stream polls it, and when nothing is ready the
// source calls back once something may be. Poll and Close are never called
// concurrently with each other; CancelWait and the wake callback may come
// from any thread.
template <typename Message>
class StreamSource {
 public:
  struct Next {
    // Ready to send, in order.
    std::vector<Message> messages;
    // Set when the stream is over once `messages` are sent: OK, or why not.
    std::optional<absl::Status> end;
    // Non-zero when there were neither messages nor an end: `wake` was
    // registered under this id and is called exactly once (when more may be
    // ready, or by CancelWait).
    uint64_t wait_id = 0;
  };

  virtual ~StreamSource() = default;

  virtual Next Poll(std::function<void()> wake) = 0;

  // Calls the wake registered under `wait_id` now, unless it was called.
  virtual void CancelWait(uint64_t wait_id) = 0;

  // The stream ended (finished, failed or cancelled). Called once, last.
  virtual void Close() {}
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_STREAM_SOURCE_H_
