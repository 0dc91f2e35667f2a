#include "worker/testing/fake_cluster_service.h"

#include "absl/strings/str_cat.h"
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

void FakeClusterService::AddLeaseFromRound(int64_t lease_id, int64_t begin, int64_t end,
                                           int64_t first_round) {
  absl::MutexLock l(&mu_);
  DataLease& lease = leases_.emplace_back();
  lease.set_lease_id(lease_id);
  lease.mutable_range()->set_begin(begin);
  lease.mutable_range()->set_end(end);
  lease.set_first_round(first_round);
}

std::vector<CompleteDataLeaseRequest> FakeClusterService::completions() const {
  absl::MutexLock l(&mu_);
  return completions_;
}

grpc::ServerUnaryReactor* FakeClusterService::Register(grpc::CallbackServerContext* context,
                                                       const RegisterRequest* /*request*/,
                                                       RegisterResponse* response) {
  response->set_heartbeat_interval_ms(50);
  response->set_heartbeat_timeout_ms(250);
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* FakeClusterService::ReportProgress(grpc::CallbackServerContext* context,
                                                             const ProgressReport* /*request*/,
                                                             ProgressResponse* response) {
  absl::MutexLock l(&mu_);
  if (end_of_data_) {
    response->set_stop(true);
    response->set_stop_reason(STOP_REASON_END_OF_DATA);
  }
  return Done(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* FakeClusterService::AcquireDataLease(
    grpc::CallbackServerContext* context, const AcquireDataLeaseRequest* /*request*/,
    DataLease* response) {
  absl::MutexLock l(&mu_);
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
  completions_.push_back(*request);
  return Done(context, absl::OkStatus());
}

}  // namespace worker
}  // namespace pstrain
