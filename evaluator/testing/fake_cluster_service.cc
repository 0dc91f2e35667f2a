#include "evaluator/testing/fake_cluster_service.h"

#include <algorithm>

#include "absl/time/clock.h"
#include "common/status/error_reason.h"
#include "common/status/grpc_status.h"

namespace pstrain {
namespace evaluator {
namespace {

// How often blocked handlers look at cancellation.
constexpr absl::Duration kPoll = absl::Milliseconds(10);

}  // namespace

FakeClusterService::~FakeClusterService() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (server_ != nullptr) server_->Shutdown(absl::Seconds(1));
}

absl::Status FakeClusterService::Start() {
  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start({}, {this});
  if (!server.ok()) return server.status();
  server_ = std::move(server).value();
  return absl::OkStatus();
}

void FakeClusterService::SetAssignment(const Assignment& assignment) {
  absl::MutexLock lock(&mu_);
  assignment_ = assignment;
}

void FakeClusterService::SetShutdown(bool shutdown) {
  absl::MutexLock lock(&mu_);
  shutdown_ = shutdown;
}

void FakeClusterService::Notify(const std::string& job_id, const CheckpointInfo& checkpoint) {
  absl::MutexLock lock(&mu_);
  CheckpointNotification notification;
  notification.set_job_id(job_id);
  *notification.mutable_checkpoint() = checkpoint;
  notifications_.push_back(notification);
}

void FakeClusterService::EndCheckpoints(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  ended_jobs_.push_back(job_id);
}

std::vector<EvalReport> FakeClusterService::WaitForReports(size_t count,
                                                           absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return reports_.size() >= count; };
  mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  return reports_;
}

std::vector<EvalReport> FakeClusterService::reports() const {
  absl::MutexLock lock(&mu_);
  return reports_;
}

std::vector<int64_t> FakeClusterService::released() const {
  absl::MutexLock lock(&mu_);
  return released_;
}

bool FakeClusterService::WaitForSent(int count, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return sent_ >= count; };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

int FakeClusterService::registrations() const {
  absl::MutexLock lock(&mu_);
  return registrations_;
}

grpc::Status FakeClusterService::Register(grpc::ServerContext*, const RegisterRequest* request,
                                          RegisterResponse* response) {
  if (request->incarnation() == 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "incarnation 0");
  }
  absl::MutexLock lock(&mu_);
  ++registrations_;
  incarnation_ = request->incarnation();
  response->set_heartbeat_interval_ms(1000);
  response->set_heartbeat_timeout_ms(10000);
  return grpc::Status::OK;
}

grpc::Status FakeClusterService::Heartbeat(grpc::ServerContext*, const HeartbeatRequest* request,
                                           HeartbeatResponse* response) {
  absl::MutexLock lock(&mu_);
  if (request->incarnation() != incarnation_) {
    return ToGrpcStatus(
        WithReason(absl::AbortedError("stale incarnation"), ERROR_REASON_STALE_INCARNATION));
  }
  response->set_job_id(assignment_.job_id());
  response->set_shutdown(shutdown_);
  return grpc::Status::OK;
}

grpc::Status FakeClusterService::GetAssignment(grpc::ServerContext* context,
                                               const GetAssignmentRequest* request,
                                               Assignment* response) {
  const absl::Time deadline = absl::Now() + absl::Milliseconds(request->wait_ms());
  absl::MutexLock lock(&mu_);
  auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || assignment_.job_id() != request->known_job_id();
  };
  while (!changed() && absl::Now() < deadline && !context->IsCancelled()) {
    mu_.AwaitWithTimeout(absl::Condition(&changed), kPoll);
  }
  if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
  *response = assignment_;
  return grpc::Status::OK;
}

grpc::Status FakeClusterService::ReportEval(grpc::ServerContext*, const EvalReport* request,
                                            EvalReportResponse*) {
  absl::MutexLock lock(&mu_);
  reports_.push_back(*request);
  return grpc::Status::OK;
}

grpc::Status FakeClusterService::ReleaseCheckpoint(grpc::ServerContext*,
                                                   const ReleaseCheckpointRequest* request,
                                                   ReleaseCheckpointResponse*) {
  absl::MutexLock lock(&mu_);
  released_.push_back(request->step());
  return grpc::Status::OK;
}

grpc::Status FakeClusterService::WatchCheckpoints(
    grpc::ServerContext* context, const WatchCheckpointsRequest* request,
    grpc::ServerWriter<CheckpointNotification>* writer) {
  size_t next = 0;
  while (true) {
    std::vector<CheckpointNotification> batch;
    bool ended = false;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || next < notifications_.size() ||
               std::count(ended_jobs_.begin(), ended_jobs_.end(), request->job_id()) > 0;
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready), kPoll);
      if (stopping_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down");
      for (; next < notifications_.size(); ++next) {
        const CheckpointNotification& n = notifications_[next];
        if (n.job_id() == request->job_id() && n.checkpoint().step() > request->after_step()) {
          batch.push_back(n);
        }
      }
      ended = std::count(ended_jobs_.begin(), ended_jobs_.end(), request->job_id()) > 0;
    }
    for (const CheckpointNotification& n : batch) {
      if (!writer->Write(n)) return grpc::Status(grpc::StatusCode::CANCELLED, "client left");
      absl::MutexLock lock(&mu_);
      ++sent_;
    }
    if (ended) return grpc::Status::OK;
    if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
  }
}

}  // namespace evaluator
}  // namespace pstrain
