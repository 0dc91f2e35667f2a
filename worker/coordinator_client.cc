#include "worker/coordinator_client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "glog/logging.h"

namespace pstrain {
namespace worker {
namespace {

// The coordinator does not know this incarnation: it restarted (NotFound)
// or marked this process lost (Aborted). Registering again fixes both.
bool NeedsRegistration(const absl::Status& status) {
  return absl::IsNotFound(status) || absl::IsAborted(status);
}

std::string TaskName(const TaskId& task) {
  const char* type = task.type() == TASK_TYPE_WORKER      ? "worker"
                     : task.type() == TASK_TYPE_EVALUATOR ? "evaluator"
                     : task.type() == TASK_TYPE_PS        ? "ps"
                                                          : "task";
  return absl::StrCat(type, "/", task.index());
}

}  // namespace

uint64_t CoordinatorClient::NewIncarnation(RandomSource& random) {
  uint64_t incarnation = 0;
  while (incarnation == 0) incarnation = random.Next();
  return incarnation;
}

absl::StatusOr<std::unique_ptr<CoordinatorClient>> CoordinatorClient::Create(
    std::shared_ptr<grpc::Channel> channel, CoordinatorClientOptions options, uint64_t incarnation,
    Clock& clock, RandomSource& random) {
  if (incarnation == 0) return absl::InvalidArgumentError("the incarnation must be non-zero");
  if (options.task.type() != TASK_TYPE_WORKER && options.task.type() != TASK_TYPE_EVALUATOR) {
    return absl::InvalidArgumentError("the coordinator client is for workers and evaluators");
  }
  return std::unique_ptr<CoordinatorClient>(
      new CoordinatorClient(std::move(channel), std::move(options), incarnation, clock, random));
}

CoordinatorClient::CoordinatorClient(std::shared_ptr<grpc::Channel> channel,
                                     CoordinatorClientOptions options, uint64_t incarnation,
                                     Clock& clock, RandomSource& random)
    : stub_(ClusterService::NewStub(std::move(channel))),
      options_(std::move(options)),
      incarnation_(incarnation),
      clock_(clock),
      random_(random) {}

CoordinatorClient::~CoordinatorClient() {
  Cancel();
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
}

void CoordinatorClient::Cancel() {
  absl::MutexLock l(&mu_);
  if (!cancelled_.HasBeenNotified()) cancelled_.Notify();
  for (grpc::ClientContext* context : calls_) context->TryCancel();
}

template <typename Request, typename Response>
absl::Status CoordinatorClient::Attempt(
    grpc::Status (ClusterService::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
    const Request& request, Response* response, absl::Duration extra) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout + extra));
  {
    absl::MutexLock l(&mu_);
    if (cancelled_.HasBeenNotified()) {
      return absl::CancelledError("the coordinator client was cancelled");
    }
    calls_.insert(&context);
  }
  const grpc::Status status = ((*stub_).*method)(&context, request, response);
  {
    absl::MutexLock l(&mu_);
    calls_.erase(&context);
  }
  absl::Status s = FromGrpcStatus(status);
  // A call that ran out of time found the coordinator unresponsive: try it
  // again like an unreachable one. Every call here is safe to repeat
  // (reports carry their sequence number).
  if (absl::IsDeadlineExceeded(s)) s = absl::UnavailableError(s.message());
  return s;
}

std::string CoordinatorClient::CoordinatorName() const {
  return options_.coordinator_address.empty()
             ? "the coordinator"
             : absl::StrCat("the coordinator at ", options_.coordinator_address);
}

template <typename Request, typename Response>
absl::Status CoordinatorClient::Call(
    const char* what,
    grpc::Status (ClusterService::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
    const Request& request, Response* response, absl::Duration extra, bool retry_unavailable,
    bool reregister) {
  const std::string name = absl::StrCat(CoordinatorName(), " (", what, ")");
  for (int registrations = 0;; ++registrations) {
    absl::Status status =
        retry_unavailable
            ? RetryOnUnavailable(name, options_.retry, clock_, random_, &cancelled_,
                                 [&] { return Attempt(method, request, response, extra); })
            : Attempt(method, request, response, extra);
    if (!reregister || !NeedsRegistration(status) || registrations >= 3) {
      if (!status.ok())
        return absl::Status(status.code(), absl::StrCat(name, ": ", status.message()));
      return status;
    }
    absl::Status registered = Reregister(status);
    if (!registered.ok()) return registered;
  }
}

absl::Status CoordinatorClient::RegisterOnce() {
  RegisterRequest request;
  *request.mutable_task() = options_.task;
  request.set_incarnation(incarnation_);
  request.set_address(options_.address);
  request.set_metrics_address(options_.metrics_address);
  RegisterResponse response;
  // Before the first attempt: the answered one was sent no earlier.
  const absl::Time sent = clock_.Now();
  absl::Status status = Call("register", &ClusterService::Stub::Register, request, &response,
                             absl::ZeroDuration(), /*retry_unavailable=*/true,
                             /*reregister=*/false);
  if (!status.ok()) return status;
  absl::MutexLock l(&mu_);
  if (response.heartbeat_interval_ms() > 0) {
    heartbeat_interval_ = absl::Milliseconds(response.heartbeat_interval_ms());
  }
  if (response.heartbeat_timeout_ms() > 0) {
    heartbeat_timeout_ = absl::Milliseconds(response.heartbeat_timeout_ms());
  }
  confirmed_at_ = std::max(confirmed_at_, sent);
  LOG(INFO) << "registered " << TaskName(options_.task) << " incarnation " << incarnation_
            << " with the coordinator; heartbeat every "
            << absl::FormatDuration(heartbeat_interval_);
  return absl::OkStatus();
}

absl::Status CoordinatorClient::Register() {
  absl::MutexLock l(&register_mu_);
  return RegisterOnce();
}

absl::Status CoordinatorClient::Reregister(const absl::Status& why) {
  LOG(WARNING) << "the coordinator does not know " << TaskName(options_.task) << " incarnation "
               << incarnation_ << " (" << why << "); registering again";
  absl::MutexLock l(&register_mu_);
  absl::Status registered = RegisterOnce();
  if (registered.ok()) {
    absl::MutexLock lock(&mu_);
    ++reregistrations_;
  }
  return registered;
}

int64_t CoordinatorClient::reregistrations() const {
  absl::MutexLock l(&mu_);
  return reregistrations_;
}

void CoordinatorClient::StartHeartbeats() {
  absl::MutexLock l(&mu_);
  if (heartbeats_started_) return;
  heartbeats_started_ = true;
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
}

void CoordinatorClient::SetJob(const std::string& job_id) {
  absl::MutexLock l(&mu_);
  job_id_ = job_id;
}

absl::Time CoordinatorClient::MembershipDeadline() const {
  absl::MutexLock l(&mu_);
  return confirmed_at_ + heartbeat_timeout_ * 3 / 4;
}

HeartbeatView CoordinatorClient::last_heartbeat() const {
  absl::MutexLock l(&mu_);
  return heartbeat_;
}

HeartbeatView CoordinatorClient::WaitForHeartbeat(int64_t answers_seen,
                                                  absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  struct Args {
    const CoordinatorClient* client;
    int64_t seen;
  } args{this, answers_seen};
  mu_.AwaitWithTimeout(absl::Condition(
                           +[](Args* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                             return a->client->heartbeat_.answers > a->seen ||
                                    a->client->cancelled_.HasBeenNotified();
                           },
                           &args),
                       timeout);
  return heartbeat_;
}

void CoordinatorClient::HeartbeatLoop() {
  absl::Time silent_since = clock_.Now();
  absl::Time next_log = silent_since;
  while (true) {
    absl::Duration interval;
    HeartbeatRequest request;
    *request.mutable_task() = options_.task;
    request.set_incarnation(incarnation_);
    {
      absl::MutexLock l(&mu_);
      interval = heartbeat_interval_;
      request.set_job_id(job_id_);
      request.set_step(self_.step);
      request.set_queue_depth(self_.undelivered_reports);
      request.set_health(self_.trouble.empty() ? MEMBER_HEALTH_OK : MEMBER_HEALTH_DEGRADED);
      request.set_health_detail(self_.trouble);
    }
    HeartbeatResponse response;
    const absl::Time sent = clock_.Now();
    absl::Status status =
        Attempt(&ClusterService::Stub::Heartbeat, request, &response, absl::ZeroDuration());
    if (status.ok()) {
      absl::MutexLock l(&mu_);
      confirmed_at_ = std::max(confirmed_at_, sent);
      ++heartbeat_.answers;
      heartbeat_.job_id = response.job_id();
      heartbeat_.shutdown = response.shutdown();
      heartbeat_.last_answer = clock_.Now();
      silent_since = heartbeat_.last_answer;
    } else if (NeedsRegistration(status)) {
      absl::Status registered = Reregister(status);
      if (absl::IsFailedPrecondition(registered)) {
        LOG(ERROR) << "heartbeats stop: " << registered;
        return;
      }
    } else if (absl::IsCancelled(status)) {
      return;
    } else if (clock_.Now() >= next_log) {
      LOG(WARNING) << "waiting for " << CoordinatorName() << " (heartbeat) since "
                   << absl::FormatDuration(
                          absl::Trunc(clock_.Now() - silent_since, absl::Seconds(1)))
                   << ": " << status;
      next_log = clock_.Now() + options_.retry.log_every;
    }
    if (clock_.SleepFor(interval, &cancelled_)) return;
  }
}

absl::StatusOr<Assignment> CoordinatorClient::GetAssignment(const std::string& known_job_id,
                                                            uint64_t known_generation,
                                                            absl::Duration wait) {
  GetAssignmentRequest request;
  *request.mutable_task() = options_.task;
  request.set_incarnation(incarnation_);
  request.set_wait_ms(absl::ToInt64Milliseconds(std::max(wait, absl::ZeroDuration())));
  request.set_known_job_id(known_job_id);
  request.set_known_generation(known_generation);
  Assignment assignment;
  absl::Status status =
      Call("assignment", &ClusterService::Stub::GetAssignment, request, &assignment, wait,
           /*retry_unavailable=*/true, /*reregister=*/true);
  if (!status.ok()) return status;
  return assignment;
}

absl::StatusOr<DataLease> CoordinatorClient::AcquireDataLease(const std::string& job_id) {
  AcquireDataLeaseRequest request;
  *request.mutable_task() = options_.task;
  request.set_incarnation(incarnation_);
  request.set_job_id(job_id);
  DataLease lease;
  // Unavailable here usually means "every range is out; ask later": the
  // caller decides how long to keep asking.
  absl::Status status =
      Call("data lease", &ClusterService::Stub::AcquireDataLease, request, &lease,
           absl::ZeroDuration(), /*retry_unavailable=*/false, /*reregister=*/true);
  if (!status.ok()) return status;
  return lease;
}

absl::Status CoordinatorClient::CompleteDataLease(const std::string& job_id, int64_t lease_id,
                                                  const std::vector<RecordRange>& returned) {
  CompleteDataLeaseRequest request;
  *request.mutable_task() = options_.task;
  request.set_incarnation(incarnation_);
  request.set_job_id(job_id);
  request.set_lease_id(lease_id);
  for (const RecordRange& range : returned) *request.add_returned() = range;
  CompleteDataLeaseResponse response;
  // NotFound is ambiguous here (an expired lease, or a coordinator that
  // forgot us); either way the lease is gone. Re-registering when the
  // coordinator forgot us is the heartbeat's job.
  return Call("complete data lease", &ClusterService::Stub::CompleteDataLease, request, &response,
              absl::ZeroDuration(), /*retry_unavailable=*/true,
              /*reregister=*/false);
}

void CoordinatorClient::NoteReportOutcome(const absl::Status& status, size_t undelivered,
                                          std::optional<int64_t> global_step) {
  absl::MutexLock l(&mu_);
  if (global_step.has_value()) self_.step = *global_step;
  self_.undelivered_reports = static_cast<int32_t>(undelivered);
  self_.trouble = status.ok() ? "" : std::string(status.message());
}

absl::StatusOr<ProgressResponse> CoordinatorClient::ReportProgress(ProgressReport report) {
  absl::MutexLock l(&report_mu_);
  *report.mutable_task() = options_.task;
  report.set_incarnation(incarnation_);
  report.set_sequence(++last_report_sequence_);
  // Reports of another job, or of an earlier run of this one (it rolled
  // back), that never got through no longer matter.
  while (!unsent_.empty() && (unsent_.front().job_id() != report.job_id() ||
                              unsent_.front().generation() != report.generation())) {
    unsent_.pop_front();
  }
  unsent_.push_back(std::move(report));
  ProgressResponse response;
  while (!unsent_.empty()) {
    absl::Status status =
        Call("progress report", &ClusterService::Stub::ReportProgress, unsent_.front(), &response,
             absl::ZeroDuration(), /*retry_unavailable=*/true, /*reregister=*/true);
    if (absl::IsFailedPrecondition(status)) {
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
