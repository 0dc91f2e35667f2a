// The JobRunner methods that keep the job's status in the queue and send
// its events to WatchJob (job_runner.cc holds the job's own thread).

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "glog/logging.h"
#include "server/coordinator/job_runner.h"

namespace pstrain {
namespace coordinator {

void JobRunner::End(JobState state, const std::string& message) {
  absl::StatusOr<JobStatus> status = context_.jobs->Get(job_id_);
  if (status.ok() && status->state() == JOB_STATE_RUNNING && state != JOB_STATE_FAILED) {
    CheckQueueWrite(
        "the stop",
        context_.jobs->BeginFinishing(job_id_, STOP_REASON_UNSPECIFIED, message).status());
  }
  absl::StatusOr<JobStatus> ended = context_.jobs->End(job_id_, state, message);
  if (!ended.ok()) {
    LOG(ERROR) << "job " << job_id_ << ": cannot end it " << JobStateName(state) << ": "
               << ended.status();
    return;
  }
  if (context_.metrics != nullptr) context_.metrics->RecordJobEnd(*ended);
  JobEvent event;
  *event.mutable_status() = *std::move(ended);
  Publish(std::move(event));
}

void JobRunner::SetReason(const std::string& reason) { UpdateReason(reason, reason); }

void JobRunner::SetWaitReason(absl::string_view prefix, WaitTracker& tracker) {
  UpdateReason(absl::StrCat(prefix, tracker.Describe()), absl::StrCat(prefix, tracker.Waiting()));
}

void JobRunner::UpdateReason(const std::string& reason, const std::string& what) {
  CheckQueueWrite("the reason", context_.jobs->UpdateStatus(job_id_, [&](JobStatus& status) {
    status.set_reason(reason);
  }));
  // Publish when what the job does changes, not every time a wait's age
  // does.
  if (what == published_reason_) return;
  published_reason_ = what;
  PublishStatus();
}

void JobRunner::PublishStatus() {
  absl::StatusOr<JobStatus> status = context_.jobs->Get(job_id_);
  if (!status.ok()) return;
  JobEvent event;
  *event.mutable_status() = *std::move(status);
  Publish(std::move(event));
}

void JobRunner::PublishCheckpointFailure(int64_t step, bool final, const absl::Status& error) {
  if (context_.metrics != nullptr) context_.metrics->RecordCheckpointFailure();
  JobEvent event;
  *event.mutable_checkpoint_failure() = checkpoint_failures_.RecordFailed(step, final, error);
  LOG(ERROR) << "job " << job_id_ << ": checkpoint at step " << step << " failed ("
             << event.checkpoint_failure().consecutive_failures() << " in a row): "
             << error.message();
  CheckQueueWrite("the checkpoint failure",
                  context_.jobs->UpdateStatus(job_id_, [&](JobStatus& status) {
                    checkpoint_failures_.FillStatus(status);
                  }));
  Publish(std::move(event));
}

void JobRunner::Publish(JobEvent event) {
  if (!context_.publish) return;
  event.set_unix_ms(absl::ToUnixMillis(clock_.Now()));
  context_.publish(std::move(event));
}

void JobRunner::RefreshCheckpointsInStatus() {
  std::vector<CheckpointInfo> checkpoints = feed_->List();
  std::map<int64_t, std::map<std::string, double>> evaluations;
  {
    absl::MutexLock lock(&mu_);
    evaluations = evaluations_;
  }
  CheckQueueWrite("the checkpoints", context_.jobs->UpdateStatus(job_id_, [&](JobStatus& status) {
    status.clear_checkpoints();
    for (CheckpointInfo& info : checkpoints) {
      auto it = evaluations.find(info.step());
      if (it != evaluations.end()) {
        info.mutable_metrics()->insert(it->second.begin(), it->second.end());
      }
      *status.add_checkpoints() = std::move(info);
    }
  }));
}

void JobRunner::CheckQueueWrite(absl::string_view what, const absl::Status& written) const {
  if (!written.ok()) {
    LOG(WARNING) << "job " << job_id_ << ": the job queue did not take " << what << ": " << written;
  }
}

std::string JobRunner::ResumeHint() const {
  if (!trains_) return "";
  std::vector<CheckpointInfo> checkpoints = feed_->List();
  if (checkpoints.empty()) return "; no checkpoint was saved";
  return absl::StrCat("; submit the job again with the same checkpoint.model_dir to resume from ",
                      CheckpointDirName(checkpoints.back().step()));
}

}  // namespace coordinator
}  // namespace pstrain
