#ifndef PSTRAIN_SERVER_COORDINATOR_CHECKPOINT_FEED_H_
#define PSTRAIN_SERVER_COORDINATOR_CHECKPOINT_FEED_H_

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "protos/job.pb.h"
#include "server/coordinator/internal/waiters.h"

namespace pstrain {
namespace coordinator {

// How far a watcher has been told: the newest step it was sent and whether
// that one was the final checkpoint.
struct FeedPosition {
  int64_t step = -1;
  bool final = false;
};

// The checkpoints of the running job that WatchCheckpoints announces: those
// its model_dir held when it started and each new one, less those deleted,
// until the job ends. A watcher reads what is newer than its position and
// waits (a callback, no thread) for more. Thread-safe.
class CheckpointFeed {
 public:
  struct Read {
    // Newer than the position, ascending by step.
    std::vector<CheckpointInfo> checkpoints;
    // The feed is closed (the job ended) and nothing newer remains.
    bool closed = false;
    // Non-zero when there was nothing newer and the feed is open: `wake` was
    // registered under this id, called exactly once on the next change or
    // by CancelWait.
    uint64_t wait_id = 0;
  };

  CheckpointFeed() = default;
  CheckpointFeed(const CheckpointFeed&) = delete;
  CheckpointFeed& operator=(const CheckpointFeed&) = delete;

  // Adds (or replaces) the checkpoint at info.step and wakes watchers.
  void Add(CheckpointInfo info);

  // Marks the checkpoint at `step` final, so that watchers who were sent it
  // as not final are sent it again. No-op for an unknown step.
  void MarkFinal(int64_t step);

  // Forgets the checkpoint at `step` (deleted).
  void Remove(int64_t step);

  // No more checkpoints: watchers end once they have read what remains.
  void Close();

  // What a watcher at `position` has not been sent, or a wait for it.
  // Advance the position with Advance() for each checkpoint sent.
  Read ReadAfter(const FeedPosition& position, std::function<void()> wake);

  // Calls the wake registered under `id` now, unless it was called.
  void CancelWait(uint64_t id) { waiters_.Fire(id); }

  // The checkpoints held, ascending by step.
  std::vector<CheckpointInfo> List() const;

  static void Advance(FeedPosition& position, const CheckpointInfo& sent);

 private:
  static bool IsNewer(const CheckpointInfo& info, const FeedPosition& position);

  mutable absl::Mutex mu_;
  std::map<int64_t, CheckpointInfo> checkpoints_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  internal::Waiters waiters_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_CHECKPOINT_FEED_H_
