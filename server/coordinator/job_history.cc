#include "server/coordinator/job_history.h"

#include <algorithm>
#include <utility>

namespace pstrain {
namespace coordinator {

JobHistory::JobHistory(JobHistoryOptions options) : options_(options) {}

void JobHistory::Append(absl::string_view job_id, const JobEvent& event) {
  absl::MutexLock lock(&mu_);
  AppendLocked(Touch(job_id), event);
}

bool JobHistory::Holds(absl::string_view job_id) const {
  absl::MutexLock lock(&mu_);
  return jobs_.find(job_id) != jobs_.end();
}

bool JobHistory::Seed(absl::string_view job_id, const std::vector<JobEvent>& events) {
  absl::MutexLock lock(&mu_);
  if (jobs_.find(job_id) != jobs_.end()) return false;
  Events& job = Touch(job_id);
  for (const JobEvent& event : events) AppendLocked(job, event);
  return true;
}

JobHistory::Events& JobHistory::Touch(absl::string_view job_id) {
  auto found = jobs_.find(job_id);
  if (found != jobs_.end()) {
    recent_.splice(recent_.begin(), recent_, found->second.recency);
    return found->second;
  }
  found = jobs_.emplace(std::string(job_id), Events()).first;
  recent_.push_front(found->first);
  found->second.recency = recent_.begin();
  while (jobs_.size() > std::max<size_t>(options_.jobs, 1)) {
    jobs_.erase(recent_.back());
    recent_.pop_back();
  }
  return found->second;
}

void JobHistory::AppendLocked(Events& job, const JobEvent& event) {
  if (event.has_progress()) {
    AppendProgress(job, event);
  } else {
    AppendOther(job, event);
  }
}

void JobHistory::AppendProgress(Events& job, const JobEvent& event) {
  // The previous newest was kept only for being the newest.
  if (job.off_stride_newest != 0) {
    job.by_sequence.erase(job.off_stride_newest);
    job.off_stride_newest = 0;
    --job.progress_kept;
  }
  const uint64_t sequence = ++job.last_sequence;
  const bool on_stride = job.progress_seen++ % job.progress_stride == 0;
  job.by_sequence.emplace(sequence, event);
  ++job.progress_kept;
  if (!on_stride) job.off_stride_newest = sequence;
  if (job.progress_kept <= std::max<size_t>(options_.progress_points, 2)) return;
  // Keep every other progress event: the curve's shape with half the points.
  job.progress_stride *= 2;
  bool keep = true;
  for (auto it = job.by_sequence.begin(); it != job.by_sequence.end();) {
    if (!it->second.has_progress() || it->first == sequence) {
      ++it;
      continue;
    }
    if (keep) {
      ++it;
    } else {
      it = job.by_sequence.erase(it);
      --job.progress_kept;
    }
    keep = !keep;
  }
  // The newest may have been on the old stride and be off the new one.
  if ((job.progress_seen - 1) % job.progress_stride != 0) job.off_stride_newest = sequence;
}

void JobHistory::AppendOther(Events& job, const JobEvent& event) {
  job.by_sequence.emplace(++job.last_sequence, event);
  if (++job.others_kept <= std::max<size_t>(options_.other_events, 1)) return;
  for (auto it = job.by_sequence.begin(); it != job.by_sequence.end(); ++it) {
    if (!it->second.has_progress()) {
      job.by_sequence.erase(it);
      --job.others_kept;
      return;
    }
  }
}

JobHistory::Read JobHistory::After(absl::string_view job_id, uint64_t after) const {
  Read read;
  read.next = after;
  absl::MutexLock lock(&mu_);
  auto found = jobs_.find(job_id);
  if (found == jobs_.end()) return read;
  const Events& job = found->second;
  for (auto it = job.by_sequence.upper_bound(after); it != job.by_sequence.end(); ++it) {
    read.events.push_back(it->second);
  }
  read.next = std::max(after, job.last_sequence);
  return read;
}

}  // namespace coordinator
}  // namespace pstrain
