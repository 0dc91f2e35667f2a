#include "server/coordinator/job_control.h"

#include <utility>

#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {
namespace coordinator {

JobControl::JobControl(std::string job_id, Clock& clock)
    : job_id_(std::move(job_id)), clock_(clock) {}

void JobControl::MoveTo(JobPhase next) {
  absl::MutexLock lock(&mu_);
  MoveToLocked(next);
}

void JobControl::MoveToLocked(JobPhase next) {
  if (!CanMove(phase_, next)) {
    LOG(DFATAL) << "job " << job_id_ << ": no move from " << JobPhaseName(phase_) << " to "
                << JobPhaseName(next);
  }
  VLOG(1) << "job " << job_id_ << ": " << JobPhaseName(phase_) << " -> " << JobPhaseName(next);
  phase_ = next;
}

bool JobControl::Start(std::shared_ptr<const StartedJob> started) {
  // One step, so that no call is admitted to kTraining without the parts.
  absl::MutexLock lock(&mu_);
  MoveToLocked(JobPhase::kTraining);
  started_ = std::move(started);
  return stop_requested_;
}

JobPhase JobControl::phase() const {
  absl::MutexLock lock(&mu_);
  return phase_;
}

absl::StatusOr<std::shared_ptr<const StartedJob>> JobControl::Admit(JobCall call) const {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(coordinator::Admit(phase_, call, job_id_));
  return started_;
}

std::shared_ptr<const StartedJob> JobControl::started() const {
  absl::MutexLock lock(&mu_);
  return started_;
}

bool JobControl::TrainingGoesOn() const {
  absl::MutexLock lock(&mu_);
  return phase_ == JobPhase::kTraining && !stop_requested_;
}

void JobControl::RequestStop(StopMode mode) {
  absl::MutexLock lock(&mu_);
  stop_requested_ = true;
  if (mode == StopMode::kImmediately) skip_final_work_ = true;
}

bool JobControl::stop_requested() const {
  absl::MutexLock lock(&mu_);
  return stop_requested_;
}

void JobControl::SkipFinalWork() {
  absl::MutexLock lock(&mu_);
  skip_final_work_ = true;
}

bool JobControl::skips_final_work() const {
  absl::MutexLock lock(&mu_);
  return skip_final_work_;
}

bool JobControl::Abort(std::string why) {
  absl::MutexLock lock(&mu_);
  if (abort_reason_.has_value()) return false;
  abort_reason_ = std::move(why);
  return true;
}

bool JobControl::aborted() const {
  absl::MutexLock lock(&mu_);
  return abort_reason_.has_value();
}

void JobControl::Fail(absl::Status why) {
  absl::MutexLock lock(&mu_);
  if (failure_.ok()) failure_ = std::move(why);
  poked_ = true;
}

absl::Status JobControl::failure() const {
  absl::MutexLock lock(&mu_);
  return failure_;
}

void JobControl::NoteStopHeard(int worker_index) {
  absl::MutexLock lock(&mu_);
  stop_heard_.insert(worker_index);
}

std::vector<int> JobControl::NotHeardStop(const std::vector<int>& workers) const {
  absl::MutexLock lock(&mu_);
  std::vector<int> pending;
  for (int i : workers) {
    if (stop_heard_.count(i) == 0) pending.push_back(i);
  }
  return pending;
}

void JobControl::Poke() {
  absl::MutexLock lock(&mu_);
  poked_ = true;
}

absl::Status JobControl::WaitForChange(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto changed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return poked_ || stop_requested_ || abort_reason_.has_value();
  };
  clock_.AwaitWithDeadline(&mu_, absl::Condition(&changed), deadline);
  poked_ = false;
  return Interruption();
}

absl::Status JobControl::Interruption() const {
  if (abort_reason_.has_value()) return absl::AbortedError(*abort_reason_);
  if (stop_requested_) return absl::CancelledError("stopped by a user");
  return absl::OkStatus();
}

}  // namespace coordinator
}  // namespace pstrain
