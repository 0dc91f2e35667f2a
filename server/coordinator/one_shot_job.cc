#include "server/coordinator/one_shot_job.h"

#include <optional>
#include <utility>

#include "common/daemon/exit_codes.h"
#include "glog/logging.h"
#include "server/coordinator/job_queue.h"
#include "server/coordinator/job_state.h"

namespace pstrain {
namespace coordinator {

int ExitCodeForJobState(JobState state) {
  switch (state) {
    case JOB_STATE_SUCCEEDED:
      return kDaemonExitOk;
    case JOB_STATE_STOPPED:
      return kDaemonExitJobStopped;
    default:
      return kDaemonExitJobFailed;
  }
}

absl::StatusOr<std::unique_ptr<OneShotJob>> OneShotJob::Submit(Coordinator& coordinator,
                                                               JobSpec spec) {
  SubmitJobRequest request;
  *request.mutable_spec() = std::move(spec);
  request.set_request_id(kRequestId);
  absl::StatusOr<SubmitJobResponse> submitted = coordinator.SubmitJob(request);
  if (absl::IsAlreadyExists(submitted.status())) {
    // The journal in its model_dir holds the run of an edited spec.
    return absl::AlreadyExistsError(
        "its model_dir already holds a one-shot run of another spec; a new run needs a new "
        "model_dir (the spec of a run cannot change once it began)");
  }
  if (!submitted.ok()) return submitted.status();
  const JobStatus& job = submitted->status();
  if (!submitted->already_submitted()) {
    LOG(INFO) << "one-shot: job " << job.job_id() << " queued; the cluster ends with it";
  } else if (IsEnded(job.state())) {
    LOG(INFO) << "one-shot: job " << job.job_id() << " already ended " << JobStateName(job.state())
              << " (recorded in the state folder)";
  } else {
    LOG(INFO) << "one-shot: job " << job.job_id() << " resumes (recorded in the state folder as "
              << JobStateName(job.state()) << ")";
  }
  return std::unique_ptr<OneShotJob>(new OneShotJob(coordinator, job.job_id()));
}

OneShotJob::~OneShotJob() { Stop(); }

void OneShotJob::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (follower_.joinable()) follower_.join();
}

void OneShotJob::Start() {
  follower_ = std::thread([this] { Follow(); });
}

JobState OneShotJob::state() const {
  absl::StatusOr<JobStatus> job = coordinator_.GetJob(job_id_);
  return job.ok() ? job->state() : JOB_STATE_UNSPECIFIED;
}

void OneShotJob::Wake() {
  absl::MutexLock lock(&mu_);
  ++wakes_;
}

void OneShotJob::Follow() {
  std::optional<JobStatus> ended;
  WatchJobRequest request;
  request.set_job_id(job_id_);
  // The watch ends when the job's log closes (it ended) or the coordinator
  // stops.
  absl::StatusOr<std::shared_ptr<StreamSource<JobEvent>>> watch = coordinator_.WatchJob(request);
  while (watch.ok() && !ended.has_value()) {
    int64_t seen = 0;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
      seen = wakes_;
    }
    StreamSource<JobEvent>::Next next = (*watch)->Poll([this] { Wake(); });
    for (const JobEvent& event : next.messages) {
      if (event.has_status() && IsEnded(event.status().state())) ended = event.status();
    }
    if (next.end.has_value()) break;
    if (next.wait_id == 0 || ended.has_value()) {
      if (next.wait_id != 0) (*watch)->CancelWait(next.wait_id);
      continue;
    }
    bool stopping = false;
    {
      absl::MutexLock lock(&mu_);
      auto woken = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return wakes_ != seen || stopping_; };
      mu_.Await(absl::Condition(&woken));
      stopping = stopping_;
    }
    // Outside mu_: CancelWait calls Wake.
    if (stopping) (*watch)->CancelWait(next.wait_id);
  }
  if (watch.ok()) (*watch)->Close();
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;  // the coordinator stops: the job is its to keep
  }
  if (!ended.has_value()) {
    // The watch ended: the job did, or the coordinator stops (then the job
    // stays recorded for the next one, and nothing is shut down).
    absl::StatusOr<JobStatus> job = coordinator_.GetJob(job_id_);
    if (!job.ok() || !IsEnded(job->state())) return;
    ended = *std::move(job);
  }
  Finish(*ended);
}

void OneShotJob::Finish(const JobStatus& job) {
  const int exit_code = ExitCodeForJobState(job.state());
  LOG(INFO) << "one-shot: job " << job.job_id() << " " << JobStateName(job.state())
            << (job.reason().empty() ? "" : ": " + job.reason())
            << "; the cluster shuts down, exit code " << exit_code;
  ShutdownRequest request;
  request.set_stop_running_job(true);  // it has ended; its runner may not have returned yet
  absl::Status shutdown = coordinator_.Shutdown(request, exit_code);
  if (!shutdown.ok()) LOG(WARNING) << "one-shot: cannot shut the cluster down: " << shutdown;
}

}  // namespace coordinator
}  // namespace pstrain
