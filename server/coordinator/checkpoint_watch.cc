#include "server/coordinator/checkpoint_watch.h"

#include <utility>

#include "glog/logging.h"

namespace pstrain {
namespace coordinator {

CheckpointWatch::CheckpointWatch(std::string job_id, std::string holder, int64_t after_step,
                                 std::shared_ptr<CheckpointFeed> feed,
                                 std::shared_ptr<RetentionPolicy> retention,
                                 std::function<void()> on_close)
    : job_id_(std::move(job_id)),
      holder_(std::move(holder)),
      feed_(std::move(feed)),
      retention_(std::move(retention)),
      on_close_(std::move(on_close)) {
  position_.step = after_step;
}

CheckpointWatch::Next CheckpointWatch::Poll(std::function<void()> wake) {
  Next next;
  for (;;) {
    CheckpointFeed::Read read = feed_->ReadAfter(position_, wake);
    for (CheckpointInfo& info : read.checkpoints) {
      CheckpointFeed::Advance(position_, info);
      if (!retention_->Acquire(info.step(), holder_).ok()) continue;
      CheckpointNotification notification;
      notification.set_job_id(job_id_);
      *notification.mutable_checkpoint() = std::move(info);
      next.messages.push_back(std::move(notification));
    }
    if (read.closed) next.end = absl::OkStatus();
    next.wait_id = read.wait_id;
    // Only skipped checkpoints: read on from the new position.
    if (next.messages.empty() && !next.end.has_value() && next.wait_id == 0) continue;
    return next;
  }
}

void CheckpointWatch::CancelWait(uint64_t wait_id) { feed_->CancelWait(wait_id); }

void CheckpointWatch::Close() {
  const int released = retention_->ReleaseHolder(holder_);
  if (released > 0) {
    VLOG(1) << holder_ << " stopped watching checkpoints of " << job_id_ << "; released "
            << released;
  }
  if (on_close_) on_close_();
}

}  // namespace coordinator
}  // namespace pstrain
