#include "common/cluster/membership_session.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config/tf_config.h"
#include "common/status/grpc_status.h"
#include "glog/logging.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace pstrain {
namespace {

uint64_t RandomIncarnation() {
  std::random_device device;
  uint64_t value = 0;
  while (value == 0) value = (uint64_t{device()} << 32) ^ device();
  return value;
}

std::string TaskName(const TaskId& task) {
  return absl::StrCat(TaskTypeName(task.type()), "/", task.index());
}

}  // namespace

MembershipSession::MembershipSession(MembershipSessionOptions options,
                                     std::function<void()> on_shutdown)
    : options_(std::move(options)),
      on_shutdown_(std::move(on_shutdown)),
      incarnation_(RandomIncarnation()),
      stub_(ClusterService::NewStub(
          CreateSecureChannel(options_.coordinator_address, options_.security))) {}

MembershipSession::~MembershipSession() { Stop(); }

void MembershipSession::Start() {
  thread_ = std::thread([this] { Run(); });
}

void MembershipSession::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

absl::Status MembershipSession::WaitUntilRegistered(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return registered_ || stopping_; };
  if (mu_.AwaitWithTimeout(absl::Condition(&done), timeout) && registered_) {
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(
      absl::StrCat(TaskName(options_.task), " not registered with the coordinator at ",
                   options_.coordinator_address, " after ", absl::FormatDuration(timeout),
                   last_error_.ok() ? "" : absl::StrCat(": ", last_error_.message())));
}

bool MembershipSession::Pause(absl::Duration duration) {
  absl::MutexLock lock(&mu_);
  auto stopping = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
  mu_.AwaitWithTimeout(absl::Condition(&stopping), duration);
  return !stopping_;
}

absl::Status MembershipSession::RegisterOnce() {
  RegisterRequest request;
  *request.mutable_task() = options_.task;
  request.set_incarnation(incarnation_);
  request.set_address(options_.address);
  request.set_metrics_address(options_.metrics_address);
  RegisterResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout));
  absl::Status status = FromGrpcStatus(stub_->Register(&context, request, &response));
  if (!status.ok()) return status;
  absl::MutexLock lock(&mu_);
  registered_ = true;
  last_error_ = absl::OkStatus();
  if (response.heartbeat_interval_ms() > 0) {
    heartbeat_interval_ = absl::Milliseconds(response.heartbeat_interval_ms());
  }
  return absl::OkStatus();
}

absl::Status MembershipSession::HeartbeatOnce(bool* shutdown) {
  HeartbeatRequest request;
  if (options_.describe_self) options_.describe_self(&request);
  *request.mutable_task() = options_.task;
  request.set_incarnation(incarnation_);
  HeartbeatResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout));
  absl::Status status = FromGrpcStatus(stub_->Heartbeat(&context, request, &response));
  *shutdown = status.ok() && response.shutdown();
  return status;
}

void MembershipSession::Run() {
  const std::string name = TaskName(options_.task);
  std::mt19937_64 jitter(incarnation_);
  absl::Duration backoff = options_.retry_initial;
  const absl::Time waiting_since = absl::Now();
  absl::Time last_report = waiting_since;
  bool registered = false;
  while (true) {
    if (!registered) {
      absl::Status status = RegisterOnce();
      if (status.ok()) {
        LOG(INFO) << name << " registered with the coordinator at " << options_.coordinator_address
                  << " (incarnation " << incarnation_ << ")";
        registered = true;
        backoff = options_.retry_initial;
        continue;
      }
      {
        absl::MutexLock lock(&mu_);
        last_error_ = status;
      }
      // Only an unreachable coordinator is worth waiting for quietly; any
      // other refusal is a configuration problem a person must see.
      if (absl::Now() - last_report >= absl::Seconds(10) ||
          status.code() != absl::StatusCode::kUnavailable) {
        LOG(WARNING) << name << " waiting for the coordinator at " << options_.coordinator_address
                     << " since "
                     << absl::FormatDuration(
                            absl::Trunc(absl::Now() - waiting_since, absl::Seconds(1)))
                     << ": " << status.message();
        last_report = absl::Now();
      }
      const double factor = std::uniform_real_distribution<double>(0.5, 1.0)(jitter);
      if (!Pause(backoff * factor)) return;
      backoff = std::min(backoff * 2, options_.retry_max);
      continue;
    }
    absl::Duration interval;
    {
      absl::MutexLock lock(&mu_);
      interval = heartbeat_interval_;
    }
    if (!Pause(interval)) return;
    bool shutdown = false;
    absl::Status status = HeartbeatOnce(&shutdown);
    if (shutdown) {
      LOG(INFO) << name << ": the coordinator is shutting the cluster down";
      if (on_shutdown_) on_shutdown_();
      return;
    }
    if (status.code() == absl::StatusCode::kAborted ||
        status.code() == absl::StatusCode::kNotFound) {
      // The coordinator restarted or marked us lost: join again.
      LOG(WARNING) << name << ": " << status.message() << "; registering again";
      registered = false;
      absl::MutexLock lock(&mu_);
      registered_ = false;
    } else if (!status.ok()) {
      LOG_EVERY_N(WARNING, 10) << name << ": heartbeat to " << options_.coordinator_address
                               << " failed: " << status.message();
    }
  }
}

}  // namespace pstrain
