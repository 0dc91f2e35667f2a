#include "server/coordinator/job_status_publisher.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"

namespace pstrain {
namespace coordinator {

JobStatusPublisher::JobStatusPublisher(std::string job_id, JobQueue& jobs, Clock& clock,
                                       JobStatusSinks sinks,
                                       std::optional<LearningRate> learning_rate)
    : job_id_(std::move(job_id)),
      jobs_(jobs),
      clock_(clock),
      sinks_(std::move(sinks)),
      learning_rate_(std::move(learning_rate)) {}

void JobStatusPublisher::SetReason(const std::string& reason) { UpdateReason(reason, reason); }

void JobStatusPublisher::SetWaitReason(absl::string_view prefix, WaitTracker& tracker) {
  UpdateReason(absl::StrCat(prefix, tracker.Describe()), absl::StrCat(prefix, tracker.Waiting()));
}

void JobStatusPublisher::UpdateReason(const std::string& reason, const std::string& what) {
  Update("the reason", [&](JobStatus& status) { status.set_reason(reason); });
  {
    absl::MutexLock lock(&reason_mu_);
    if (what == published_reason_) return;
    published_reason_ = what;
  }
  PublishStatus();
}

void JobStatusPublisher::PublishProgress(const ReportedProgress& progress,
                                         TrainSummaries* summaries) {
  absl::MutexLock lock(&progress_mu_);
  if (progress.examples_per_sec.has_value()) {
    rates_[progress.reporter] = *progress.examples_per_sec;
  }
  double rate = 0;
  for (const auto& [reporter, r] : rates_) rate += r;
  if (progress.loss.has_value()) last_loss_ = *progress.loss;
  if (progress.step < published_step_) return;
  published_step_ = progress.step;
  CheckQueueWrite("progress", jobs_.RecordProgress(job_id_, progress.step, last_loss_, rate));
  if (summaries != nullptr && progress.loss.has_value()) {
    summaries->OnProgress(progress.step, last_loss_, rate);
  }
  JobEvent event;
  ProgressEvent* published = event.mutable_progress();
  published->set_global_step(progress.step);
  published->set_loss(last_loss_);
  published->set_examples_per_sec(rate);
  published->set_epoch(progress.epoch);
  if (learning_rate_.has_value()) published->set_learning_rate(learning_rate_->At(progress.step));
  Publish(std::move(event));
  if (progress_log_.Open()) {
    LOG(INFO) << "job " << job_id_ << ": step " << progress.step << ", "
              << absl::StrFormat("%.0f", rate) << " examples/s, loss "
              << absl::StrFormat("%.4g", last_loss_) << ", epoch " << progress.epoch;
  }
}

double JobStatusPublisher::examples_per_sec() const {
  absl::MutexLock lock(&progress_mu_);
  double rate = 0;
  for (const auto& [reporter, r] : rates_) rate += r;
  return rate;
}

void JobStatusPublisher::ForgetReporter(const std::string& reporter) {
  absl::MutexLock lock(&progress_mu_);
  rates_.erase(reporter);
}

void JobStatusPublisher::RestartProgressAt(int64_t step) {
  absl::MutexLock lock(&progress_mu_);
  published_step_ = step;
  rates_.clear();
  CheckQueueWrite("the step training starts at", jobs_.RecordProgress(job_id_, step, 0, 0));
}

absl::StatusOr<JobStatus> JobStatusPublisher::Get() const { return jobs_.Get(job_id_); }

void JobStatusPublisher::Update(absl::string_view what,
                                const std::function<void(JobStatus&)>& update) {
  CheckQueueWrite(what, jobs_.UpdateStatus(job_id_, update));
}

void JobStatusPublisher::Record() {
  if (!sinks_.record) return;
  if (absl::StatusOr<JobStatus> job = jobs_.Get(job_id_); job.ok()) sinks_.record(*job);
}

void JobStatusPublisher::BeginFinishing(StopReason reason, const std::string& message) {
  absl::StatusOr<JobStatus> status = jobs_.Get(job_id_);
  if (!status.ok() || status->state() != JOB_STATE_RUNNING) return;
  CheckQueueWrite("the stop", jobs_.BeginFinishing(job_id_, reason, message).status());
  PublishStatus();
}

void JobStatusPublisher::End(JobState state, const std::string& message) {
  absl::StatusOr<JobStatus> status = jobs_.Get(job_id_);
  if (status.ok() && status->state() == JOB_STATE_RUNNING && state != JOB_STATE_FAILED) {
    CheckQueueWrite("the stop",
                    jobs_.BeginFinishing(job_id_, STOP_REASON_UNSPECIFIED, message).status());
  }
  absl::StatusOr<JobStatus> ended = jobs_.End(job_id_, state, message);
  if (!ended.ok()) {
    LOG(ERROR) << "job " << job_id_ << ": cannot end it " << JobStateName(state) << ": "
               << ended.status();
    return;
  }
  if (sinks_.metrics != nullptr) sinks_.metrics->RecordJobEnd(*ended);
  JobEvent event;
  *event.mutable_status() = *std::move(ended);
  Publish(std::move(event));
}

void JobStatusPublisher::PublishStatus() {
  absl::StatusOr<JobStatus> status = jobs_.Get(job_id_);
  if (!status.ok()) return;
  JobEvent event;
  *event.mutable_status() = *std::move(status);
  Publish(std::move(event));
}

void JobStatusPublisher::Publish(JobEvent event) {
  if (!sinks_.publish) return;
  event.set_unix_ms(absl::ToUnixMillis(clock_.Now()));
  sinks_.publish(std::move(event));
}

void JobStatusPublisher::PublishSkippedEvaluation(int64_t step, std::string why) {
  JobEvent event;
  event.mutable_eval()->set_checkpoint_step(step);
  event.mutable_eval()->set_skipped_reason(std::move(why));
  Publish(std::move(event));
}

void JobStatusPublisher::CheckQueueWrite(absl::string_view what,
                                         const absl::Status& written) const {
  if (!written.ok()) {
    LOG(WARNING) << "job " << job_id_ << ": the job queue did not take " << what << ": " << written;
  }
}

}  // namespace coordinator
}  // namespace pstrain
