#include "worker/coordinator_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"

namespace pstrain {
namespace worker {

absl::StatusOr<std::unique_ptr<CoordinatorClient>> CoordinatorClient::Create(
    std::shared_ptr<grpc::Channel> channel, CoordinatorClientOptions options, uint64_t incarnation,
    Clock& clock, RandomSource& random) {
  if (options.task.type() != TASK_TYPE_WORKER && options.task.type() != TASK_TYPE_EVALUATOR) {
    return absl::InvalidArgumentError("the coordinator client is for workers and evaluators");
  }
  std::unique_ptr<CoordinatorClient> client(new CoordinatorClient());
  CoordinatorClient* self = client.get();
  options.describe_self = [self](HeartbeatRequest* beat) { self->DescribeSelf(beat); };
  absl::StatusOr<std::unique_ptr<MemberSession>> member =
      MemberSession::Create(std::move(channel), std::move(options), incarnation, clock, random);
  if (!member.ok()) return member.status();
  client->member_ = *std::move(member);
  return client;
}

void CoordinatorClient::SetJob(const std::string& job_id) {
  absl::MutexLock l(&mu_);
  job_id_ = job_id;
}

void CoordinatorClient::DescribeSelf(HeartbeatRequest* beat) const {
  absl::MutexLock l(&mu_);
  beat->set_job_id(job_id_);
  beat->set_step(step_);
  beat->set_queue_depth(undelivered_reports_);
  beat->set_health(trouble_.empty() ? MEMBER_HEALTH_OK : MEMBER_HEALTH_DEGRADED);
  beat->set_health_detail(trouble_);
}

absl::StatusOr<DataLease> CoordinatorClient::AcquireDataLease(const std::string& job_id) {
  AcquireDataLeaseRequest request;
  *request.mutable_task() = member_->task();
  request.set_incarnation(member_->incarnation());
  request.set_job_id(job_id);
  DataLease lease;
  // "Every range is out" and "the job is still starting" are answers: the
  // caller decides how long to keep asking.
  CallPolicy policy;
  policy.caller_waits_on = {ERROR_REASON_NO_FREE_LEASE, ERROR_REASON_JOB_STARTING};
  absl::Status status =
      member_->Call("data lease", &ClusterService::Stub::AcquireDataLease, request, &lease, policy);
  if (!status.ok()) return status;
  return lease;
}

absl::Status CoordinatorClient::CompleteDataLease(const std::string& job_id, int64_t lease_id,
                                                  const std::vector<RecordRange>& returned,
                                                  bool outcome_unknown) {
  CompleteDataLeaseRequest request;
  *request.mutable_task() = member_->task();
  request.set_incarnation(member_->incarnation());
  request.set_job_id(job_id);
  request.set_lease_id(lease_id);
  for (const RecordRange& range : returned) *request.add_returned() = range;
  request.set_outcome_unknown(outcome_unknown);
  CompleteDataLeaseResponse response;
  return member_->Call("complete data lease", &ClusterService::Stub::CompleteDataLease, request,
                       &response);
}

void CoordinatorClient::NoteReportOutcome(const absl::Status& status, size_t undelivered,
                                          std::optional<int64_t> global_step) {
  absl::MutexLock l(&mu_);
  if (global_step.has_value()) step_ = *global_step;
  undelivered_reports_ = static_cast<int32_t>(undelivered);
  trouble_ = status.ok() ? "" : std::string(status.message());
}

absl::StatusOr<JoinRoundResponse> CoordinatorClient::JoinRound(const std::string& job_id,
                                                               uint64_t generation, int64_t round,
                                                               uint64_t push_incarnation,
                                                               uint64_t push_sequence,
                                                               absl::Duration wait) {
  JoinRoundRequest request;
  *request.mutable_task() = member_->task();
  request.set_incarnation(member_->incarnation());
  request.set_job_id(job_id);
  request.set_generation(generation);
  request.set_round(round);
  request.set_push_incarnation(push_incarnation);
  request.set_push_sequence(push_sequence);
  request.set_wait_ms(absl::ToInt64Milliseconds(wait));
  CallPolicy policy;
  policy.caller_waits_on = {ERROR_REASON_ROUND_OPEN};
  policy.extra_deadline = wait;
  JoinRoundResponse response;
  absl::Status status =
      member_->Call("join round", &ClusterService::Stub::JoinRound, request, &response, policy);
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<ProgressResponse> CoordinatorClient::ReportProgress(ProgressReport report) {
  absl::MutexLock l(&report_mu_);
  *report.mutable_task() = member_->task();
  report.set_incarnation(member_->incarnation());
  // Reports of another job, or of an earlier run of this one (it rolled
  // back), that never got through no longer matter.
  while (!unsent_.empty() && (unsent_.front().job_id() != report.job_id() ||
                              unsent_.front().generation() != report.generation())) {
    unsent_.pop_front();
  }
  unsent_.push_back(std::move(report));
  ProgressResponse response;
  while (!unsent_.empty()) {
    absl::Status status = member_->Call("progress report", &ClusterService::Stub::ReportProgress,
                                        unsent_.front(), &response);
    if (EndsRun(status)) {
      unsent_.clear();
      NoteReportOutcome(absl::OkStatus(), 0, std::nullopt);
      return status;
    }
    if (!status.ok()) {  // kept for the next report
      NoteReportOutcome(status, unsent_.size(), std::nullopt);
      return status;
    }
    unsent_.pop_front();
  }
  NoteReportOutcome(absl::OkStatus(), 0, response.global_step());
  return response;
}

}  // namespace worker
}  // namespace pstrain
