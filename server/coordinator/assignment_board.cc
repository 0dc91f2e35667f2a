#include "server/coordinator/assignment_board.h"

#include <algorithm>
#include <vector>

namespace pstrain {
namespace coordinator {

AssignmentBoard::JobWide AssignmentBoard::ShareJobWide(const Assignment& assignment) {
  auto job_wide = std::make_shared<Assignment>();
  *job_wide->mutable_spec() = assignment.spec();
  *job_wide->mutable_placements() = assignment.placements();
  return job_wide;
}

Assignment AssignmentBoard::GetLocked(const Key& key) const {
  auto it = assignments_.find(key);
  if (it == assignments_.end()) return Assignment();
  Assignment assignment = it->second.own;
  if (it->second.job_wide != nullptr) {
    *assignment.mutable_spec() = it->second.job_wide->spec();
    *assignment.mutable_placements() = it->second.job_wide->placements();
  }
  return assignment;
}

AssignmentBoard::KnownRun AssignmentBoard::RunLocked(const Key& key) const {
  auto it = assignments_.find(key);
  if (it == assignments_.end()) return KnownRun();
  return KnownRun{it->second.own.job_id(), it->second.own.generation()};
}

std::vector<AssignmentBoard::Answer> AssignmentBoard::TakeLocked(
    const std::function<bool(const Poll&)>& pred) {
  std::vector<Answer> answers;
  for (auto it = polls_.begin(); it != polls_.end();) {
    if (!pred(it->second)) {
      ++it;
      continue;
    }
    answers.push_back({std::move(it->second.done), GetLocked(it->second.task)});
    it = polls_.erase(it);
  }
  return answers;
}

void AssignmentBoard::Deliver(std::vector<Answer> answers) {
  for (Answer& answer : answers) answer.done(answer.assignment);
}

void AssignmentBoard::Set(const TaskId& task, Assignment assignment) {
  JobWide job_wide;
  if (assignment.has_spec() || assignment.placements_size() > 0) {
    auto own = std::make_shared<Assignment>();
    own->mutable_spec()->Swap(assignment.mutable_spec());
    own->mutable_placements()->Swap(assignment.mutable_placements());
    job_wide = std::move(own);
  }
  SetShared(task, std::move(assignment), std::move(job_wide));
}

void AssignmentBoard::SetShared(const TaskId& task, Assignment own, JobWide job_wide) {
  own.clear_spec();
  own.clear_placements();
  std::vector<Answer> answers;
  {
    absl::MutexLock lock(&mu_);
    const Key key = KeyOf(task);
    answers =
        TakeLocked([&](const Poll& poll) { return poll.task == key && Differs(own, poll.known); });
    if (own.job_id().empty()) {
      assignments_.erase(key);
    } else {
      assignments_[key] = Held{std::move(own), std::move(job_wide)};
    }
    for (Answer& answer : answers) answer.assignment = GetLocked(key);
  }
  Deliver(std::move(answers));
}

void AssignmentBoard::ClearJob(absl::string_view job_id) {
  std::vector<Answer> answers;
  {
    absl::MutexLock lock(&mu_);
    std::vector<Key> cleared;
    for (auto it = assignments_.begin(); it != assignments_.end();) {
      if (it->second.own.job_id() == job_id) {
        cleared.push_back(it->first);
        it = assignments_.erase(it);
      } else {
        ++it;
      }
    }
    answers = TakeLocked([&](const Poll& poll) {
      return !poll.known.job_id.empty() &&
             std::find(cleared.begin(), cleared.end(), poll.task) != cleared.end();
    });
  }
  Deliver(std::move(answers));
}

Assignment AssignmentBoard::Get(const TaskId& task) const {
  absl::MutexLock lock(&mu_);
  return GetLocked(KeyOf(task));
}

AssignmentBoard::AssignedJob AssignmentBoard::JobOf(const TaskId& task) const {
  absl::MutexLock lock(&mu_);
  AssignedJob job;
  auto it = assignments_.find(KeyOf(task));
  if (it == assignments_.end()) return job;
  const Assignment& own = it->second.own;
  job.job_id = own.job_id();
  job.replica_epoch = own.replica_epoch();
  if (job.replica_epoch > 0) {
    job.ps_addresses.assign(own.ps_addresses().begin(), own.ps_addresses().end());
  }
  return job;
}

bool AssignmentBoard::Differs(const Assignment& assignment, const KnownRun& known) {
  return assignment.job_id() != known.job_id || assignment.generation() != known.generation;
}

uint64_t AssignmentBoard::Await(const TaskId& task, const KnownRun& known, absl::Time deadline,
                                Callback done, Assignment* now) {
  const absl::Time time = clock_.Now();
  absl::MutexLock lock(&mu_);
  const Key key = KeyOf(task);
  const KnownRun current = RunLocked(key);
  if (current.job_id != known.job_id || current.generation != known.generation ||
      deadline <= time) {
    *now = GetLocked(key);
    return 0;
  }
  const uint64_t id = ++last_poll_id_;
  polls_.emplace(id, Poll{key, known, deadline, std::move(done)});
  return id;
}

void AssignmentBoard::Cancel(uint64_t id) {
  std::vector<Answer> answers;
  {
    absl::MutexLock lock(&mu_);
    auto it = polls_.find(id);
    if (it == polls_.end()) return;
    answers.push_back({std::move(it->second.done), GetLocked(it->second.task)});
    polls_.erase(it);
  }
  Deliver(std::move(answers));
}

void AssignmentBoard::Expire() {
  const absl::Time now = clock_.Now();
  std::vector<Answer> answers;
  {
    absl::MutexLock lock(&mu_);
    answers = TakeLocked([&](const Poll& poll) { return poll.deadline <= now; });
  }
  Deliver(std::move(answers));
}

void AssignmentBoard::CancelAll() {
  std::vector<Answer> answers;
  {
    absl::MutexLock lock(&mu_);
    answers = TakeLocked([](const Poll&) { return true; });
  }
  Deliver(std::move(answers));
}

int AssignmentBoard::waiting() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(polls_.size());
}

}  // namespace coordinator
}  // namespace pstrain
