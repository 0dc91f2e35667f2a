#include "client/job_follower.h"

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"

namespace pstrain {

JobFollower::JobFollower(JobServiceClient& client, std::ostream& out, OutputOptions options)
    : client_(client), out_(out), options_(options) {}

absl::StatusOr<JobStatus> JobFollower::Follow(const std::string& job_id, absl::Duration deadline) {
  // Asked first: an unknown job is refused plainly, and the spec gives the
  // bar its length and headline metric.
  ASSIGN_OR_RETURN(JobStatus initial, client_.Get(job_id));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  {
    absl::MutexLock lock(&mu_);
    if (!cancel_reason_.empty()) return absl::CancelledError(cancel_reason_);
    printer_ = std::make_unique<JobEventPrinter>(out_, options_, initial.spec().stop().max_steps(),
                                                 initial.spec().eval().best_metric());
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
  std::string cancel_reason;
  {
    absl::MutexLock lock(&mu_);
    printer_->Finish();
    stream_context_ = nullptr;
    cancel_reason = cancel_reason_;
  }
  if (!cancel_reason.empty()) return absl::CancelledError(cancel_reason);
  if (!finished.ok()) {
    absl::Status status = client_.Explain(finished);
    if (status.code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::DeadlineExceededError(absl::StrCat("job ", job_id, " did not end within ",
                                                      absl::FormatDuration(deadline)));
    }
    return status;
  }
  // The stream's last status may precede the final one by a hair.
  return client_.Get(job_id);
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
