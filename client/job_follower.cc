#include "client/job_follower.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "client/enum_names.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// How often a follower that lost the coordinator asks whether it is back.
constexpr absl::Duration kReconnectPoll = absl::Seconds(1);

}  // namespace

JobFollower::JobFollower(JobServiceClient& client, std::ostream& out, OutputOptions options)
    : client_(client), out_(out), options_(options) {}

absl::StatusOr<JobStatus> JobFollower::Follow(const std::string& job_id, absl::Duration deadline,
                                              absl::Duration reconnect_window) {
  const absl::Time give_up = absl::Now() + deadline;
  // Asked first: an unknown job is refused plainly, and the spec gives the
  // bar its length and headline metric.
  ASSIGN_OR_RETURN(JobStatus initial, client_.Get(job_id));
  {
    absl::MutexLock lock(&mu_);
    if (!cancel_reason_.empty()) return absl::CancelledError(cancel_reason_);
    printer_ = std::make_unique<JobEventPrinter>(out_, options_, initial.spec().stop().max_steps(),
                                                 initial.spec().eval().best_metric());
  }
  for (;;) {
    absl::Status watched = WatchUntilEnd(job_id, give_up);
    if (watched.ok()) break;
    if (!absl::IsUnavailable(watched) || reconnect_window <= absl::ZeroDuration()) {
      FinishPrinting();
      if (absl::IsDeadlineExceeded(watched)) {
        return absl::DeadlineExceededError(
            absl::StrCat("job ", job_id, " did not end within ", absl::FormatDuration(deadline)));
      }
      return watched;
    }
    // A coordinator that restarts resumes its running job under the same
    // id (its journal): wait for it rather than give up on the job.
    Announce(absl::StrCat("lost the coordinator at ", client_.address(), "; waiting up to ",
                          absl::FormatDuration(reconnect_window),
                          " for it to come back (a restarted coordinator resumes the job)"));
    ASSIGN_OR_RETURN(const JobStatus back,
                     AwaitCoordinator(job_id, std::min(give_up, absl::Now() + reconnect_window),
                                      reconnect_window));
    std::string resumed;
    if (back.resumed_from_step() > 0) {
      resumed = absl::StrCat(", resumed from step ", back.resumed_from_step());
    }
    Announce(absl::StrCat("the coordinator is back: job ", job_id, " is ",
                          JobStateName(back.state()), " at step ", back.global_step(), resumed));
  }
  FinishPrinting();
  // The stream's last status may precede the final one by a hair.
  return client_.Get(job_id);
}

absl::Status JobFollower::WatchUntilEnd(const std::string& job_id, absl::Time give_up) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(give_up));
  {
    absl::MutexLock lock(&mu_);
    if (!cancel_reason_.empty()) return absl::CancelledError(cancel_reason_);
    stream_context_ = &context;
  }
  WatchJobRequest request;
  request.set_job_id(job_id);
  request.set_include_progress(true);
  std::unique_ptr<grpc::ClientReader<JobEvent>> stream = client_.stub().WatchJob(&context, request);
  JobEvent event;
  while (stream->Read(&event)) {
    absl::MutexLock lock(&mu_);
    printer_->Print(event, absl::Now());
  }
  const grpc::Status finished = stream->Finish();
  {
    absl::MutexLock lock(&mu_);
    stream_context_ = nullptr;
    if (!cancel_reason_.empty()) return absl::CancelledError(cancel_reason_);
  }
  return finished.ok() ? absl::OkStatus() : client_.Explain(finished);
}

absl::StatusOr<JobStatus> JobFollower::AwaitCoordinator(const std::string& job_id, absl::Time until,
                                                        absl::Duration window) {
  absl::Status last;
  for (;;) {
    absl::StatusOr<JobStatus> job = client_.Get(job_id);
    if (job.ok()) return job;
    if (!absl::IsUnavailable(job.status())) return job.status();
    last = job.status();
    absl::MutexLock lock(&mu_);
    auto cancelled = [this]()
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !cancel_reason_.empty(); };
    const absl::Time next = std::min(until, absl::Now() + kReconnectPoll);
    if (mu_.AwaitWithDeadline(absl::Condition(&cancelled), next)) {
      return absl::CancelledError(cancel_reason_);
    }
    if (absl::Now() >= until) {
      return absl::UnavailableError(absl::StrCat(last.message(), "; it went away while job ",
                                                 job_id, " ran and was not back within ",
                                                 absl::FormatDuration(window)));
    }
  }
}

void JobFollower::FinishPrinting() {
  absl::MutexLock lock(&mu_);
  if (printer_ != nullptr) printer_->Finish();
}

void JobFollower::Cancel(const std::string& reason) {
  absl::MutexLock lock(&mu_);
  cancel_reason_ = reason.empty() ? "cancelled" : reason;
  if (stream_context_ != nullptr) stream_context_->TryCancel();
}

void JobFollower::Announce(const std::string& line) {
  absl::MutexLock lock(&mu_);
  if (printer_ != nullptr) {
    printer_->PrintLine(line);
  } else if (options_.format == OutputFormat::kText) {
    out_ << line << "\n" << std::flush;
  }
}

}  // namespace pstrain
