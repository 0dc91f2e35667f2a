#include "server/coordinator/job_workers.h"

#include <algorithm>
#include <utility>

namespace pstrain {
namespace coordinator {

void JobWorkers::Plan(int count, int max_workers, bool elastic) {
  absl::MutexLock lock(&mu_);
  count_ = count;
  max_workers_ = std::max(max_workers, count);
  elastic_ = elastic;
}

void JobWorkers::ChangeCount(int count) {
  absl::MutexLock lock(&mu_);
  count_ = count;
  max_workers_ = std::max(max_workers_, count);
}

std::vector<int> JobWorkers::Publish(const Assignment& base, const std::vector<int>& present) {
  absl::MutexLock lock(&mu_);
  published_ = true;
  // One spec and set of placements for every rank, however many.
  job_wide_ = AssignmentBoard::ShareJobWide(base);
  base_ = base;
  base_.clear_spec();
  base_.clear_placements();
  std::set<int> ranks;
  for (int rank = 0; rank < count_; ++rank) ranks.insert(rank);
  if (elastic_) {
    ranks.insert(ranks_.begin(), ranks_.end());
    ranks.insert(registered_early_.begin(), registered_early_.end());
    ranks.insert(present.begin(), present.end());
  }
  registered_early_.clear();
  // A rank past a fixed count (its slot is gone) no longer has the job.
  for (int rank : ranks_) {
    if (ranks.count(rank) == 0) HandLocked(rank, false);
  }
  ranks_.clear();
  for (int rank : ranks) {
    if (rank < 0 || rank >= max_workers_) continue;
    ranks_.insert(rank);
    HandLocked(rank, true);
  }
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
  if (rank < 0 || rank >= max_workers_) return WorkerJoin::kBeyondLimit;
  if (!elastic_) return WorkerJoin::kAtABoundary;
  ranks_.insert(rank);
  HandLocked(rank, true);
  return WorkerJoin::kJoined;
}

void JobWorkers::HandLocked(int rank, bool in_job) {
  TaskId task;
  task.set_type(TASK_TYPE_WORKER);
  task.set_index(rank);
  if (!in_job) {
    board_.Set(task, Assignment());
    return;
  }
  Assignment assignment = base_;
  assignment.set_worker_rank(rank);
  board_.SetShared(task, std::move(assignment), job_wide_);
}

std::vector<int> JobWorkers::Ranks() const {
  absl::MutexLock lock(&mu_);
  return std::vector<int>(ranks_.begin(), ranks_.end());
}

int JobWorkers::count() const {
  absl::MutexLock lock(&mu_);
  return count_;
}

int JobWorkers::max_workers() const {
  absl::MutexLock lock(&mu_);
  return max_workers_;
}

}  // namespace coordinator
}  // namespace pstrain
