#include "server/coordinator/training_generation.h"

#include <algorithm>
#include <utility>

namespace pstrain {
namespace coordinator {

void TrainingGeneration::Connect(std::shared_ptr<ShardGroup> shards,
                                 std::vector<uint64_t> incarnations) {
  number_ = Next();
  absl::MutexLock lock(&mu_);
  shards_ = std::move(shards);
  incarnations_ = std::move(incarnations);
  if (cancelled_) shards_->CancelAll();
}

std::shared_ptr<ShardGroup> TrainingGeneration::shards() const {
  absl::MutexLock lock(&mu_);
  return shards_;
}

void TrainingGeneration::Renew(std::vector<uint64_t> incarnations) {
  number_ = Next();
  absl::MutexLock lock(&mu_);
  incarnations_ = std::move(incarnations);
  lost_.reset();
  lost_replicas_.clear();
}

void TrainingGeneration::Advance() { number_ = Next(); }

bool TrainingGeneration::Loses(int index, uint64_t incarnation) const {
  absl::MutexLock lock(&mu_);
  if (done_) return false;
  const size_t shard = static_cast<size_t>(index);
  // Before Connect, any process of the shard holds what the job set up.
  return shard >= incarnations_.size() || incarnations_[shard] == incarnation;
}

void TrainingGeneration::Adopt(int index, uint64_t incarnation) {
  absl::MutexLock lock(&mu_);
  const size_t task = static_cast<size_t>(index);
  if (task < incarnations_.size()) incarnations_[task] = incarnation;
}

void TrainingGeneration::MarkLost(std::string why) {
  absl::MutexLock lock(&mu_);
  if (!lost_.has_value()) lost_ = std::move(why);
}

std::optional<std::string> TrainingGeneration::lost() const {
  absl::MutexLock lock(&mu_);
  return lost_;
}

void TrainingGeneration::MarkReplicaLost(LostReplica replica) {
  absl::MutexLock lock(&mu_);
  lost_replicas_.push_back(std::move(replica));
}

std::vector<LostReplica> TrainingGeneration::TakeLostReplicas() {
  absl::MutexLock lock(&mu_);
  std::vector<LostReplica> lost;
  lost.swap(lost_replicas_);
  return lost;
}

void TrainingGeneration::MarkDone() {
  absl::MutexLock lock(&mu_);
  done_ = true;
}

void TrainingGeneration::CancelAll() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  if (shards_ != nullptr) shards_->CancelAll();
}

uint64_t TrainingGeneration::Next() const {
  const uint64_t now =
      static_cast<uint64_t>(std::max<int64_t>(1, absl::ToUnixMicros(clock_.Now())));
  return std::max(now, number_.load() + 1);
}

}  // namespace coordinator
}  // namespace pstrain
