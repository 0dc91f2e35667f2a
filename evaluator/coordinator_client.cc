#include "evaluator/coordinator_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status/error_reason.h"
#include "common/status/grpc_status.h"

namespace pstrain {
namespace evaluator {

CheckpointWatch::CheckpointWatch(MemberSession& member, const WatchCheckpointsRequest& request,
                                 absl::Duration timeout)
    : member_(member) {
  // RPC deadlines are wall-clock by nature: they bound real waiting.
  context_.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  if (!member_.calls().Add(&context_)) {
    finished_ = true;
    final_status_ = absl::CancelledError(
        absl::StrCat(member_.CoordinatorName(), " (WatchCheckpoints): the session was cancelled"));
    return;
  }
  registered_ = true;
  reader_ = member_.stub().WatchCheckpoints(&context_, request);
}

CheckpointWatch::~CheckpointWatch() {
  Cancel();
  if (!finished_) {
    CheckpointNotification ignored;
    while (reader_->Read(&ignored)) {
    }
    reader_->Finish().ok();
  }
  if (registered_) member_.calls().Remove(&context_);
}

absl::StatusOr<CheckpointNotification> CheckpointWatch::Next() {
  if (finished_) return final_status_;
  CheckpointNotification notification;
  if (reader_->Read(&notification)) return notification;
  finished_ = true;
  const absl::Status status = FromGrpcStatus(reader_->Finish());
  if (status.ok()) {
    final_status_ = absl::OutOfRangeError("the coordinator ended the checkpoint stream");
  } else if (absl::IsCancelled(status)) {
    final_status_ = absl::CancelledError("checkpoint stream cancelled");
  } else {
    final_status_ =
        WithPrefix(status, absl::StrCat(member_.CoordinatorName(), " (WatchCheckpoints): "));
  }
  return final_status_;
}

void CheckpointWatch::Cancel() {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return;
  cancelled_ = true;
  context_.TryCancel();
}

absl::StatusOr<EvalReportResponse> CoordinatorClient::ReportEval(EvalReport report) {
  *report.mutable_task() = member_.task();
  report.set_incarnation(member_.incarnation());
  EvalReportResponse response;
  absl::Status status = member_.Call(
      absl::StrCat("ReportEval of step ", report.checkpoint_step(), " of job ", report.job_id()),
      &ClusterService::Stub::ReportEval, report, &response);
  if (!status.ok()) return status;
  return response;
}

absl::Status CoordinatorClient::ReleaseCheckpoint(const std::string& job_id, int64_t step) {
  ReleaseCheckpointRequest request;
  *request.mutable_task() = member_.task();
  request.set_incarnation(member_.incarnation());
  request.set_job_id(job_id);
  request.set_step(step);
  ReleaseCheckpointResponse response;
  return member_.Call(absl::StrCat("ReleaseCheckpoint of step ", step),
                      &ClusterService::Stub::ReleaseCheckpoint, request, &response);
}

std::unique_ptr<CheckpointWatch> CoordinatorClient::WatchCheckpoints(
    WatchCheckpointsRequest request) {
  *request.mutable_task() = member_.task();
  request.set_incarnation(member_.incarnation());
  return std::make_unique<CheckpointWatch>(member_, request, watch_timeout_);
}

}  // namespace evaluator
}  // namespace pstrain
