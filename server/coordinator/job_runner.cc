#include "server/coordinator/job_runner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "server/coordinator/job_evaluation.h"
#include "server/coordinator/job_finish.h"
#include "server/coordinator/job_start.h"
#include "server/coordinator/job_training.h"

namespace pstrain {
namespace coordinator {

JobRunner::JobRunner(const JobStatus& job, JobRunnerOptions options, JobRunnerContext context)
    : parts_(job, std::move(options), std::move(context)) {}

void JobRunner::Run() {
  LOG(INFO) << "job " << parts_.job_id << " (" << JobMode_Name(parts_.spec.mode())
            << ") starts; model_dir " << parts_.spec.checkpoint().model_dir();
  parts_.status.PublishStatus();
  absl::Status status = StartJob(parts_);
  if (status.ok()) status = parts_.trains ? TrainJob(parts_) : EvaluateOnlyJob(parts_);
  JobOutcome outcome;
  if (status.ok() || absl::IsCancelled(status)) {
    outcome = FinishJob(parts_);
  } else {
    outcome.message = std::string(status.message());
    const std::shared_ptr<const StartedJob> job = parts_.control.started();
    if (job != nullptr && job->step != nullptr) {
      absl::StrAppend(&outcome.message, parts_.checkpoints.ResumeHint());
    }
  }
  // The cluster is free before the job is seen to end, so whoever waits for
  // the end may submit the next job at once.
  ReleaseJob(parts_);
  if (outcome.state == JOB_STATE_FAILED) {
    LOG(ERROR) << "job " << parts_.job_id << " failed: " << outcome.message;
  } else {
    LOG(INFO) << "job " << parts_.job_id << " ended " << JobStateName(outcome.state) << ": "
              << outcome.message;
  }
  parts_.status.End(outcome.state, outcome.message);
}

}  // namespace coordinator
}  // namespace pstrain
