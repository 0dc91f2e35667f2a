#include "common/cluster/member_session.h"

#include <algorithm>
#include <utility>

#include "common/config/tf_config.h"
#include "common/status/grpc_status.h"
#include "glog/logging.h"

namespace pstrain {

uint64_t MemberSession::NewIncarnation(RandomSource& random) {
  uint64_t incarnation = 0;
  while (incarnation == 0) incarnation = random.Next();
  return incarnation;
}

absl::StatusOr<std::unique_ptr<MemberSession>> MemberSession::Create(
    std::shared_ptr<grpc::Channel> channel, MemberSessionOptions options, uint64_t incarnation,
    Clock& clock, RandomSource& random) {
  if (incarnation == 0) return absl::InvalidArgumentError("the incarnation must be non-zero");
  if (options.task.type() == TASK_TYPE_UNSPECIFIED) {
    return absl::InvalidArgumentError("a cluster member needs a task type");
  }
  return std::unique_ptr<MemberSession>(
      new MemberSession(std::move(channel), std::move(options), incarnation, clock, random));
}

MemberSession::MemberSession(std::shared_ptr<grpc::Channel> channel, MemberSessionOptions options,
                             uint64_t incarnation, Clock& clock, RandomSource& random)
    : stub_(ClusterService::NewStub(std::move(channel))),
      options_(std::move(options)),
      incarnation_(incarnation),
      name_(absl::StrCat(TaskTypeName(options_.task.type()), "/", options_.task.index())),
      clock_(clock),
      retry_context_{clock, random, cancelled_} {}

MemberSession::~MemberSession() {
  Cancel();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
}

void MemberSession::Cancel() {
  cancelled_.Stop();
  calls_.Shutdown();
  // Wakes WaitForHeartbeat, whose condition reads the signal.
  absl::MutexLock lock(&mu_);
}

absl::Status MemberSession::Leave(const std::string& reason, absl::Duration timeout) {
  {
    absl::MutexLock lock(&mu_);
    if (!registered_) return absl::OkStatus();
  }
  LeaveRequest request;
  *request.mutable_task() = options_.task;
  request.set_incarnation(incarnation_);
  request.set_reason(reason);
  LeaveResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  const absl::Status left = FromGrpcStatus(stub_->Leave(&context, request, &response));
  if (left.ok()) {
    LOG(INFO) << name_ << " left the cluster (" << reason << "): " << CoordinatorName()
              << " hands its work to others now";
  } else {
    LOG(WARNING) << name_ << " could not tell " << CoordinatorName() << " that it leaves ("
                 << left << "); it is taken for lost at its membership deadline";
  }
  return left;
}

std::string MemberSession::CoordinatorName() const {
  return options_.coordinator_address.empty()
             ? "the coordinator"
             : absl::StrCat("the coordinator at ", options_.coordinator_address);
}

absl::Status MemberSession::AttemptStatus(const grpc::Status& status, bool session_cancelled) {
  absl::Status converted = FromGrpcStatus(status);
  // A call that ran out of time found the coordinator unresponsive, and one
  // it cancelled was cut by its shutdown (a restart): try either again like
  // an unreachable one. Every call here is safe to repeat (reports carry
  // their sequence number).
  if (absl::IsDeadlineExceeded(converted) ||
      (absl::IsCancelled(converted) && !session_cancelled)) {
    return absl::UnavailableError(converted.message());
  }
  return converted;
}

absl::Status MemberSession::Register() {
  absl::MutexLock lock(&register_mu_);
  return RegisterLocked();
}

absl::Status MemberSession::RegisterLocked() {
  RegisterRequest request;
  *request.mutable_task() = options_.task;
  request.set_incarnation(incarnation_);
  request.set_address(options_.address);
  request.set_metrics_address(options_.metrics_address);
  RegisterResponse response;
  // Before the first attempt: the answered one was sent no earlier.
  const absl::Time sent = clock_.Now();
  absl::Status status = Retried(absl::StrCat(CoordinatorName(), " (register)"),
                                &ClusterService::Stub::Register, request, &response, CallPolicy());
  if (!status.ok()) return status;
  absl::MutexLock lock(&mu_);
  registered_ = true;
  if (response.heartbeat_interval_ms() > 0) {
    heartbeat_interval_ = absl::Milliseconds(response.heartbeat_interval_ms());
  }
  if (response.heartbeat_timeout_ms() > 0) {
    heartbeat_timeout_ = absl::Milliseconds(response.heartbeat_timeout_ms());
  }
  confirmed_at_ = std::max(confirmed_at_, sent);
  LOG(INFO) << "registered " << name_ << " incarnation " << incarnation_ << " with "
            << CoordinatorName() << "; heartbeat every "
            << absl::FormatDuration(heartbeat_interval_);
  return absl::OkStatus();
}

absl::Status MemberSession::Reregister(const absl::Status& why) {
  LOG(WARNING) << CoordinatorName() << " does not know " << name_ << " incarnation " << incarnation_
               << " (" << why << "); registering again";
  absl::MutexLock lock(&register_mu_);
  absl::Status registered = RegisterLocked();
  if (registered.ok()) {
    absl::MutexLock state_lock(&mu_);
    ++reregistrations_;
  }
  return registered;
}

int64_t MemberSession::reregistrations() const {
  absl::MutexLock lock(&mu_);
  return reregistrations_;
}

absl::Status MemberSession::RegisterUntilAccepted() {
  return RetryUntilStopped(
      absl::StrCat(CoordinatorName(), " (register ", name_, ")"), options_.retry, retry_context_,
      [](const absl::Status& status) { return !IsFinalRefusal(status); },
      [this] { return Register(); });
}

void MemberSession::StartHeartbeats(HeartbeatHooks hooks) {
  {
    absl::MutexLock lock(&mu_);
    if (heartbeats_started_) return;
    heartbeats_started_ = true;
  }
  // Not under mu_: the hooks are called with hooks_mu_ held, and may call
  // what takes mu_.
  {
    absl::MutexLock hooks_lock(&hooks_mu_);
    hooks_.describe_self =
        hooks.describe_self ? std::move(hooks.describe_self) : options_.describe_self;
    hooks_.on_shutdown = hooks.on_shutdown ? std::move(hooks.on_shutdown) : options_.on_shutdown;
    hooks_.on_answer = std::move(hooks.on_answer);
  }
  absl::MutexLock lock(&mu_);
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
}

absl::Time MemberSession::MembershipDeadline() const {
  absl::MutexLock lock(&mu_);
  return confirmed_at_ + heartbeat_timeout_ * 3 / 4;
}

HeartbeatView MemberSession::last_heartbeat() const {
  absl::MutexLock lock(&mu_);
  return heartbeat_;
}

HeartbeatView MemberSession::WaitForHeartbeat(int64_t answers_seen, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto answered = [this, answers_seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return heartbeat_.answers > answers_seen || cancelled_.stopped();
  };
  mu_.AwaitWithTimeout(absl::Condition(&answered), timeout);
  return heartbeat_;
}

bool MemberSession::NoteAnswer(const HeartbeatRequest& sent, const HeartbeatResponse& answer,
                               absl::Time sent_at) {
  HeartbeatView heard;
  {
    absl::MutexLock lock(&mu_);
    confirmed_at_ = std::max(confirmed_at_, sent_at);
    ++heartbeat_.answers;
    heartbeat_.job_id = answer.job_id();
    heartbeat_.replica_epoch = answer.replica_epoch();
    heartbeat_.ps_addresses.assign(answer.ps_addresses().begin(), answer.ps_addresses().end());
    heartbeat_.shutdown = answer.shutdown();
    heartbeat_.exit_code = answer.exit_code();
    heartbeat_.last_answer = clock_.Now();
    heard = heartbeat_;
  }
  if (options_.on_heartbeat) options_.on_heartbeat(sent, answer);
  absl::MutexLock hooks_lock(&hooks_mu_);
  if (hooks_.on_answer) hooks_.on_answer(heard);
  if (!answer.shutdown()) return false;
  LOG(INFO) << name_ << ": " << CoordinatorName() << " shuts the cluster down";
  if (hooks_.on_shutdown) hooks_.on_shutdown(answer.exit_code());
  return true;
}

void MemberSession::DetachHooks() {
  absl::MutexLock hooks_lock(&hooks_mu_);
  hooks_.describe_self = options_.describe_self;
  hooks_.on_shutdown = options_.on_shutdown;
  hooks_.on_answer = nullptr;
}

void MemberSession::NoteMembership(bool member) {
  if (member == member_) return;
  member_ = member;
  if (member) {
    LOG(INFO) << name_ << " is a member of the cluster: " << CoordinatorName()
              << " answers its heartbeats";
  } else {
    LOG(WARNING) << name_ << " is not ready: " << CoordinatorName()
                 << " has not answered its heartbeats for longer than its membership holds";
  }
  if (options_.on_membership) options_.on_membership(member);
}

void MemberSession::HeartbeatLoop() {
  bool registered;
  {
    absl::MutexLock lock(&mu_);
    registered = registered_;
  }
  if (!registered) {
    const absl::Status status = RegisterUntilAccepted();
    if (!status.ok()) {
      if (!absl::IsCancelled(status)) LOG(ERROR) << name_ << " stops its heartbeats: " << status;
      return;
    }
  }
  absl::Time silent_since = clock_.Now();
  absl::Time next_log = silent_since;
  auto interval = [this] {
    absl::MutexLock lock(&mu_);
    return heartbeat_interval_;
  };
  RepeatEvery(retry_context_, interval, [&] { return Beat(silent_since, next_log); });
}

bool MemberSession::Beat(absl::Time& silent_since, absl::Time& next_log) {
  HeartbeatRequest request;
  {
    absl::MutexLock hooks_lock(&hooks_mu_);
    if (hooks_.describe_self) hooks_.describe_self(&request);
  }
  *request.mutable_task() = options_.task;
  request.set_incarnation(incarnation_);
  HeartbeatResponse response;
  const absl::Time sent = clock_.Now();
  absl::Status status =
      Attempt(&ClusterService::Stub::Heartbeat, request, &response, absl::ZeroDuration());
  if (status.ok()) {
    NoteMembership(true);
    if (NoteAnswer(request, response, sent)) return false;
    silent_since = clock_.Now();
    return true;
  }
  // Not known as it is, or past the time the coordinator keeps it: not a
  // member, whatever comes next.
  if (NeedsRegistration(status) || clock_.Now() >= MembershipDeadline()) NoteMembership(false);
  if (NeedsRegistration(status)) {
    absl::Status registered = Reregister(status);
    if (IsFinalRefusal(registered)) {
      if (!absl::IsCancelled(registered)) {
        LOG(ERROR) << name_ << " stops its heartbeats: " << registered;
      }
      return false;
    }
  } else if (absl::IsCancelled(status) || cancelled_.stopped()) {
    return false;
  } else if (clock_.Now() >= next_log) {
    LOG(WARNING) << name_ << " waiting for " << CoordinatorName() << " (heartbeat) since "
                 << absl::FormatDuration(absl::Trunc(clock_.Now() - silent_since, absl::Seconds(1)))
                 << ": " << status;
    next_log = clock_.Now() + options_.retry.log_every;
  }
  return true;
}

absl::StatusOr<Assignment> MemberSession::GetAssignment(const std::string& known_job_id,
                                                        uint64_t known_generation,
                                                        absl::Duration wait) {
  GetAssignmentRequest request;
  *request.mutable_task() = options_.task;
  request.set_incarnation(incarnation_);
  wait = std::max(wait, absl::ZeroDuration());
  request.set_wait_ms(absl::ToInt64Milliseconds(wait));
  request.set_known_job_id(known_job_id);
  request.set_known_generation(known_generation);
  Assignment assignment;
  CallPolicy policy;
  policy.extra_deadline = wait;
  absl::Status status =
      Call("assignment", &ClusterService::Stub::GetAssignment, request, &assignment, policy);
  if (!status.ok()) return status;
  return assignment;
}

}  // namespace pstrain
