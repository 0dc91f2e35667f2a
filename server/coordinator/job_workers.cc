#include "server/coordinator/job_workers.h"

#include <algorithm>
#include <utility>

namespace pstrain {
namespace coordinator {

std::vector<int> JobWorkers::Publish(const Assignment& base, int start_count, int max_workers,
                                     bool elastic, const std::vector<int>& present) {
  absl::MutexLock lock(&mu_);
  published_ = true;
  base_ = base;
  start_count_ = start_count;
  max_workers_ = elastic ? std::max(max_workers, start_count) : start_count;
  elastic_ = elastic;
  for (int rank = 0; rank < start_count; ++rank) ranks_.insert(rank);
  std::set<int> joining = std::move(registered_early_);
  registered_early_.clear();
  joining.insert(present.begin(), present.end());
  for (int rank : joining) {
    if (rank >= 0 && rank < max_workers_) ranks_.insert(rank);
  }
  for (int rank : ranks_) HandLocked(rank);
  return std::vector<int>(ranks_.begin(), ranks_.end());
}

WorkerJoin JobWorkers::Join(const TaskId& task) {
  absl::MutexLock lock(&mu_);
  const int rank = task.index();
  if (!published_) {
    registered_early_.insert(rank);
    return WorkerJoin::kNotYet;
  }
  if (ranks_.count(rank) > 0) return WorkerJoin::kAlreadyIn;
  if (!elastic_) return WorkerJoin::kFixedCount;
  if (rank < 0 || rank >= max_workers_) return WorkerJoin::kBeyondLimit;
  ranks_.insert(rank);
  HandLocked(rank);
  return WorkerJoin::kJoined;
}

void JobWorkers::HandLocked(int rank) {
  Assignment assignment = base_;
  assignment.set_worker_rank(rank);
  TaskId task;
  task.set_type(TASK_TYPE_WORKER);
  task.set_index(rank);
  board_.Set(task, std::move(assignment));
}

std::vector<int> JobWorkers::Ranks() const {
  absl::MutexLock lock(&mu_);
  return std::vector<int>(ranks_.begin(), ranks_.end());
}

int JobWorkers::start_count() const {
  absl::MutexLock lock(&mu_);
  return start_count_;
}

int JobWorkers::max_workers() const {
  absl::MutexLock lock(&mu_);
  return max_workers_;
}

}  // namespace coordinator
}  // namespace pstrain
