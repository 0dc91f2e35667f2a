#include "worker/testing/fake_cluster_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
#include "common/status/grpc_status.h"

namespace pstrain {
namespace worker {
namespace {

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context, const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace

FakeClusterService::FakeClusterService() = default;

FakeClusterService::~FakeClusterService() { Shutdown(); }

absl::Status FakeClusterService::Start() {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port == 0) return absl::UnavailableError("cannot start the fake");
  address_ = absl::StrCat("127.0.0.1:", port);
  return absl::OkStatus();
}

void FakeClusterService::Shutdown() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
    server_.reset();
  }
}

void FakeClusterService::ForgetMembers() {
  absl::MutexLock l(&mu_);
  members_.clear();
}

void FakeClusterService::AbortNextCalls(int count) {
  absl::MutexLock l(&mu_);
  abort_next_ = count;
}

void FakeClusterService::UnavailableNextCalls(int count) {
  absl::MutexLock l(&mu_);
  unavailable_next_ = count;
}

void FakeClusterService::SetHeartbeatInterval(absl::Duration interval) {
  absl::MutexLock l(&mu_);
  heartbeat_interval_ = interval;
}

void FakeClusterService::SetAssignment(const Assignment& assignment) {
  absl::MutexLock l(&mu_);
  assignment_ = assignment;
}

void FakeClusterService::SetShutdown(bool shutdown) {
  absl::MutexLock l(&mu_);
  shutdown_ = shutdown;
}

void FakeClusterService::AddLease(int64_t lease_id, int64_t begin, int64_t end, int32_t epoch) {
  absl::MutexLock l(&mu_);
  DataLease& lease = leases_.emplace_back();
  lease.set_lease_id(lease_id);
  lease.mutable_range()->set_begin(begin);
  lease.mutable_range()->set_end(end);
  lease.set_epoch(epoch);
}

void FakeClusterService::AddLeaseFromRound(int64_t lease_id, int64_t begin, int64_t end,
                                           int64_t first_round) {
  AddLease(lease_id, begin, end);
  absl::MutexLock l(&mu_);
  leases_.back().set_first_round(first_round);
}

void FakeClusterService::StopAfterReports(int reports) {
  absl::MutexLock l(&mu_);
  stop_after_reports_ = reports;
}

int FakeClusterService::registrations() const {
  absl::MutexLock l(&mu_);
  return registrations_;
}

uint64_t FakeClusterService::incarnation_of(int worker) const {
  absl::MutexLock l(&mu_);
  auto it = members_.find(worker);
  return it == members_.end() ? 0 : it->second;
}

int FakeClusterService::heartbeats() const {
  absl::MutexLock l(&mu_);
  return heartbeats_;
}

std::vector<ProgressReport> FakeClusterService::reports() const {
  absl::MutexLock l(&mu_);
  return reports_;
}

std::vector<CompleteDataLeaseRequest> FakeClusterService::completions() const {
  absl::MutexLock l(&mu_);
  return completions_;
}

int64_t FakeClusterService::global_step() const {
  absl::MutexLock l(&mu_);
  return global_step_;
}

bool FakeClusterService::WaitForCompletions(int count, absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  struct Args {
    const FakeClusterService* self;
    int count;
  } args{this, count};
  return mu_.AwaitWithTimeout(absl::Condition(
                                  +[](Args* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                    return static_cast<int>(a->self->completions_.size()) >=
                                           a->count;
                                  },
                                  &args),
                              timeout);
}

absl::Status FakeClusterService::CheckCaller(const TaskId& task, uint64_t incarnation) {
  if (unavailable_next_ > 0) {
    --unavailable_next_;
    return absl::UnavailableError("the coordinator is restarting");
  }
  if (abort_next_ > 0) {
    --abort_next_;
    return WithReason(absl::AbortedError("the member was marked lost"), ERROR_REASON_MEMBER_LOST);
  }
  auto it = members_.find(task.index());
  if (it == members_.end()) {
    return WithReason(absl::NotFoundError("not registered"), ERROR_REASON_MEMBER_UNKNOWN);
  }
  if (it->second != incarnation) {
    return WithReason(absl::AbortedError("the task restarted with a new incarnation"),
                      ERROR_REASON_STALE_INCARNATION);
  }
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* FakeClusterService::Register(grpc::CallbackServerContext* context,
                                                       const RegisterRequest* request,
                                                       RegisterResponse* response) {
  absl::MutexLock l(&mu_);
  if (request->incarnation() == 0) {
    return Done(context, absl::InvalidArgumentError("zero incarnation"));
  }
  members_[request->task().index()] = request->incarnation();
  ++registrations_;
  response->set_heartbeat_interval_ms(absl::ToInt64Milliseconds(heartbeat_interval_));
  response->set_heartbeat_timeout_ms(absl::ToInt64Milliseconds(heartbeat_interval_ * 5));
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* FakeClusterService::Heartbeat(grpc::CallbackServerContext* context,
                                                        const HeartbeatRequest* request,
                                                        HeartbeatResponse* response) {
  absl::MutexLock l(&mu_);
  absl::Status caller = CheckCaller(request->task(), request->incarnation());
  if (!caller.ok()) return Done(context, caller);
  ++heartbeats_;
  response->set_job_id(assignment_.job_id());
  response->set_shutdown(shutdown_);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* FakeClusterService::GetAssignment(grpc::CallbackServerContext* context,
                                                            const GetAssignmentRequest* request,
                                                            Assignment* response) {
  absl::MutexLock l(&mu_);
  absl::Status caller = CheckCaller(request->task(), request->incarnation());
  if (!caller.ok()) return Done(context, caller);
  struct Args {
    FakeClusterService* self;
    const GetAssignmentRequest* request;
  } args{this, request};
  // A short long poll: tests keep their waits small.
  mu_.AwaitWithTimeout(absl::Condition(
                           +[](Args* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                             return a->self->assignment_.job_id() != a->request->known_job_id() ||
                                    a->self->shutdown_;
                           },
                           &args),
                       std::min(absl::Milliseconds(request->wait_ms()), absl::Seconds(1)));
  *response = assignment_;
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* FakeClusterService::ReportProgress(grpc::CallbackServerContext* context,
                                                             const ProgressReport* request,
                                                             ProgressResponse* response) {
  absl::MutexLock l(&mu_);
  absl::Status caller = CheckCaller(request->task(), request->incarnation());
  if (!caller.ok()) return Done(context, caller);
  if (request->job_id() != assignment_.job_id()) {
    return Done(context, WithReason(absl::FailedPreconditionError("the job is not running"),
                                    ERROR_REASON_JOB_ENDED));
  }
  reports_.push_back(*request);
  const std::string reporter = absl::StrCat(request->task().index(), "/", request->incarnation());
  if (request->sequence() == 0 || request->sequence() > counted_sequence_[reporter]) {
    counted_sequence_[reporter] = request->sequence();
    global_step_ += request->applied_updates();
    ++counted_reports_;
  }
  response->set_global_step(global_step_);
  if (stop_after_reports_ > 0 && counted_reports_ >= stop_after_reports_) {
    response->set_stop(true);
    response->set_stop_reason(STOP_REASON_MAX_STEPS);
  } else if (end_of_data_) {
    response->set_stop(true);
    response->set_stop_reason(STOP_REASON_END_OF_DATA);
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* FakeClusterService::AcquireDataLease(
    grpc::CallbackServerContext* context, const AcquireDataLeaseRequest* request,
    DataLease* response) {
  absl::MutexLock l(&mu_);
  absl::Status caller = CheckCaller(request->task(), request->incarnation());
  if (!caller.ok()) return Done(context, caller);
  if (leases_.empty()) {
    response->set_end_of_data(true);
    end_of_data_ = true;
  } else {
    *response = leases_.front();
    leases_.pop_front();
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* FakeClusterService::CompleteDataLease(
    grpc::CallbackServerContext* context, const CompleteDataLeaseRequest* request,
    CompleteDataLeaseResponse* /*response*/) {
  absl::MutexLock l(&mu_);
  absl::Status caller = CheckCaller(request->task(), request->incarnation());
  if (!caller.ok()) return Done(context, caller);
  completions_.push_back(*request);
  return Done(context, absl::OkStatus());
}

}  // namespace worker
}  // namespace pstrain
