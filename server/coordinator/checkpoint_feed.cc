#include "server/coordinator/checkpoint_feed.h"

#include <utility>

namespace pstrain {
namespace coordinator {

bool CheckpointFeed::IsNewer(const CheckpointInfo& info, const FeedPosition& position) {
  return info.step() > position.step ||
         (info.step() == position.step && info.final() && !position.final);
}

void CheckpointFeed::Advance(FeedPosition& position, const CheckpointInfo& sent) {
  if (!IsNewer(sent, position)) return;
  position.step = sent.step();
  position.final = sent.final();
}

void CheckpointFeed::Add(CheckpointInfo info) {
  {
    absl::MutexLock lock(&mu_);
    const int64_t step = info.step();
    checkpoints_[step] = std::move(info);
  }
  waiters_.FireAll();
}

void CheckpointFeed::MarkFinal(int64_t step) {
  {
    absl::MutexLock lock(&mu_);
    auto it = checkpoints_.find(step);
    if (it == checkpoints_.end() || it->second.final()) return;
    it->second.set_final(true);
  }
  waiters_.FireAll();
}

void CheckpointFeed::Remove(int64_t step) {
  absl::MutexLock lock(&mu_);
  checkpoints_.erase(step);
}

void CheckpointFeed::Close() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  waiters_.FireAll();
}

CheckpointFeed::Read CheckpointFeed::ReadAfter(const FeedPosition& position,
                                               std::function<void()> wake) {
  Read read;
  absl::MutexLock lock(&mu_);
  for (auto it = checkpoints_.lower_bound(position.step); it != checkpoints_.end(); ++it) {
    if (IsNewer(it->second, position)) read.checkpoints.push_back(it->second);
  }
  if (read.checkpoints.empty()) {
    if (closed_) {
      read.closed = true;
    } else {
      read.wait_id = waiters_.Add(std::move(wake));
    }
  }
  return read;
}

std::vector<CheckpointInfo> CheckpointFeed::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<CheckpointInfo> list;
  list.reserve(checkpoints_.size());
  for (const auto& [step, info] : checkpoints_) list.push_back(info);
  return list;
}

}  // namespace coordinator
}  // namespace pstrain
