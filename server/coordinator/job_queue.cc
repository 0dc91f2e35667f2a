#include "server/coordinator/job_queue.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "google/protobuf/util/message_differencer.h"
#include "server/coordinator/job_state.h"

namespace pstrain {
namespace coordinator {
namespace {

constexpr int kDefaultListLimit = 100;

bool IsActive(JobState state) { return state == JOB_STATE_RUNNING || state == JOB_STATE_FINISHING; }

absl::Status IllegalTransition(const JobStatus& job, JobState to) {
  return absl::FailedPreconditionError(absl::StrCat("job ", job.job_id(), " is ",
                                                    JobStateName(job.state()),
                                                    "; it cannot become ", JobStateName(to)));
}

}  // namespace

std::string JobStateName(JobState state) {
  std::string name = JobState_Name(state);
  constexpr absl::string_view kPrefix = "JOB_STATE_";
  if (absl::StartsWith(name, kPrefix)) return name.substr(kPrefix.size());
  return name.empty() ? absl::StrCat("state ", static_cast<int>(state)) : name;
}

JobState EndStateFor(StopReason reason) {
  switch (reason) {
    case STOP_REASON_USER:
      return JOB_STATE_STOPPED;
    case STOP_REASON_NAN_LOSS:
    case STOP_REASON_ERROR:
    case STOP_REASON_CHECKPOINT_FAILURES:
      return JOB_STATE_FAILED;
    default:
      return JOB_STATE_SUCCEEDED;
  }
}

absl::StatusOr<std::unique_ptr<JobQueue>> JobQueue::Create(Clock& clock, JobQueueOptions options) {
  if (options.max_queued_jobs < 1 || options.max_ended_jobs < 1) {
    return absl::InvalidArgumentError(absl::StrCat("max queued jobs (", options.max_queued_jobs,
                                                   ") and max ended jobs (", options.max_ended_jobs,
                                                   ") must be >= 1"));
  }
  return std::unique_ptr<JobQueue>(new JobQueue(clock, options));
}

JobQueue::JobQueue(Clock& clock, JobQueueOptions options) : clock_(clock), options_(options) {}

absl::Status JobQueue::CheckRoom() const {
  if (static_cast<int>(queued_.size()) < options_.max_queued_jobs) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the queue is full: ", queued_.size(), " jobs are waiting, the most the coordinator allows ",
      "(--max_queued_jobs); submit again once one has started, or stop one"));
}

absl::StatusOr<JobStatus> JobQueue::Submit(JobSpec spec) {
  ASSIGN_OR_RETURN(JobSpec admitted, Admit(std::move(spec)));
  return Enqueue(std::move(admitted));
}

absl::StatusOr<JobSpec> JobQueue::Admit(JobSpec spec) const {
  ASSIGN_OR_RETURN(JobSpec prepared, PrepareJobSpec(std::move(spec)));
  if (options_.admit) {
    // A full queue refuses first: admission may read the job's data.
    {
      absl::MutexLock lock(&mu_);
      RETURN_IF_ERROR(CheckRoom());
    }
    RETURN_IF_ERROR(options_.admit(prepared));
  }
  return prepared;
}

absl::StatusOr<JobStatus> JobQueue::Enqueue(JobSpec admitted, std::string request_id) {
  const int64_t now_ms = absl::ToUnixMillis(clock_.Now());
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckRoom());
  if (!request_id.empty() && number_by_request_.contains(request_id)) {
    return absl::AlreadyExistsError(
        absl::StrCat("request id ", request_id, " queued job ",
                     jobs_.at(number_by_request_.at(request_id)).job_id(), " already"));
  }
  const int64_t number = ++last_number_;
  JobStatus& job = jobs_[number];
  job.set_job_id(absl::StrCat(admitted.name(), "-", number));
  job.set_name(admitted.name());
  job.set_state(JOB_STATE_QUEUED);
  job.set_submit_unix_ms(now_ms);
  *job.mutable_spec() = std::move(admitted);
  number_by_id_[job.job_id()] = number;
  if (!request_id.empty()) number_by_request_[request_id] = number;
  job.set_request_id(std::move(request_id));
  queued_.push_back(number);
  return job;
}

bool JobQueue::KnowsRequest(absl::string_view request_id) const {
  if (request_id.empty()) return false;
  absl::MutexLock lock(&mu_);
  return number_by_request_.contains(request_id);
}

absl::StatusOr<std::optional<JobStatus>> JobQueue::FindSubmitted(absl::string_view request_id,
                                                                 const JobSpec& admitted) const {
  if (request_id.empty()) return std::nullopt;
  absl::MutexLock lock(&mu_);
  auto found = number_by_request_.find(request_id);
  if (found == number_by_request_.end()) return std::nullopt;
  const JobStatus& job = jobs_.at(found->second);
  if (!google::protobuf::util::MessageDifferencer::Equals(job.spec(), admitted)) {
    return absl::AlreadyExistsError(
        absl::StrCat("request id ", request_id, " queued job ", job.job_id(),
                     " with another spec; give a new job a new request id"));
  }
  return job;
}

absl::StatusOr<JobStatus> JobQueue::StartNext() {
  const int64_t now_ms = absl::ToUnixMillis(clock_.Now());
  absl::MutexLock lock(&mu_);
  if (active_.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat("job ", jobs_[*active_].job_id(), " is ",
                                                      JobStateName(jobs_[*active_].state()),
                                                      "; one job runs at a time"));
  }
  if (queued_.empty()) return absl::NotFoundError("no job is queued");
  const int64_t number = queued_.front();
  queued_.pop_front();
  JobStatus& job = jobs_[number];
  job.set_state(JOB_STATE_RUNNING);
  job.set_start_unix_ms(now_ms);
  job.clear_reason();
  active_ = number;
  return job;
}

absl::StatusOr<JobStatus> JobQueue::BeginFinishing(absl::string_view job_id, StopReason reason,
                                                   absl::string_view message) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobStatus*> job = FindOrNotFound(job_id);
  if (!job.ok()) return job.status();
  if ((*job)->state() != JOB_STATE_RUNNING) return IllegalTransition(**job, JOB_STATE_FINISHING);
  (*job)->set_state(JOB_STATE_FINISHING);
  (*job)->set_stop_reason(reason);
  (*job)->set_reason(std::string(message));
  return **job;
}

absl::StatusOr<JobStatus> JobQueue::End(absl::string_view job_id, JobState state,
                                        absl::string_view message) {
  if (!IsEnded(state)) {
    return absl::InvalidArgumentError(
        absl::StrCat(JobStateName(state), " does not end a job; use SUCCEEDED, FAILED or STOPPED"));
  }
  if (state == JOB_STATE_FAILED && message.empty()) {
    return absl::InvalidArgumentError("a failed job needs a reason a person can act on");
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobStatus*> job = FindOrNotFound(job_id);
  if (!job.ok()) return job.status();
  const JobState from = (*job)->state();
  const bool legal =
      from == JOB_STATE_FINISHING || (from == JOB_STATE_RUNNING && state == JOB_STATE_FAILED);
  if (!legal) return IllegalTransition(**job, state);
  if (from == JOB_STATE_RUNNING && (*job)->stop_reason() == STOP_REASON_UNSPECIFIED) {
    (*job)->set_stop_reason(STOP_REASON_ERROR);
  }
  MarkEnded(**job, state, message);
  return **job;
}

absl::StatusOr<JobStatus> JobQueue::Stop(absl::string_view job_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobStatus*> job = FindOrNotFound(job_id);
  if (!job.ok()) return job.status();
  switch ((*job)->state()) {
    case JOB_STATE_QUEUED:
      (*job)->set_stop_reason(STOP_REASON_USER);
      MarkEnded(**job, JOB_STATE_STOPPED, "stopped by a user before it started");
      break;
    case JOB_STATE_RUNNING:
      (*job)->set_state(JOB_STATE_FINISHING);
      (*job)->set_stop_reason(STOP_REASON_USER);
      (*job)->set_reason("stopped by a user");
      break;
    default:
      break;
  }
  return **job;
}

absl::Status JobQueue::RecordProgress(absl::string_view job_id, int64_t global_step, double loss,
                                      double examples_per_sec) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobStatus*> job = FindActive(job_id);
  if (!job.ok()) return job.status();
  (*job)->set_global_step(global_step);
  (*job)->set_loss(loss);
  (*job)->set_examples_per_sec(examples_per_sec);
  return absl::OkStatus();
}

absl::Status JobQueue::UpdateStatus(absl::string_view job_id,
                                    const std::function<void(JobStatus&)>& update) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobStatus*> job = FindActive(job_id);
  if (!job.ok()) return job.status();
  JobStatus& status = **job;
  // What only the queue may change, kept aside and restored.
  JobStatus fixed;
  fixed.set_job_id(status.job_id());
  fixed.set_name(status.name());
  fixed.set_state(status.state());
  fixed.set_stop_reason(status.stop_reason());
  fixed.set_submit_unix_ms(status.submit_unix_ms());
  fixed.set_start_unix_ms(status.start_unix_ms());
  fixed.set_end_unix_ms(status.end_unix_ms());
  fixed.mutable_spec()->Swap(status.mutable_spec());
  update(status);
  status.set_job_id(fixed.job_id());
  status.set_name(fixed.name());
  status.set_state(fixed.state());
  status.set_stop_reason(fixed.stop_reason());
  status.set_submit_unix_ms(fixed.submit_unix_ms());
  status.set_start_unix_ms(fixed.start_unix_ms());
  status.set_end_unix_ms(fixed.end_unix_ms());
  status.mutable_spec()->Swap(fixed.mutable_spec());
  return absl::OkStatus();
}

absl::StatusOr<JobStatus> JobQueue::Get(absl::string_view job_id) const {
  absl::MutexLock lock(&mu_);
  auto it = number_by_id_.find(job_id);
  if (it == number_by_id_.end()) {
    return absl::NotFoundError(absl::StrCat("no job '", job_id, "'"));
  }
  return jobs_.at(it->second);
}

absl::StatusOr<std::vector<JobStatus>> JobQueue::List(absl::Span<const JobState> states,
                                                      int limit) const {
  if (limit < 0) {
    return absl::InvalidArgumentError(absl::StrCat("limit must be >= 0, got ", limit));
  }
  if (limit == 0) limit = kDefaultListLimit;
  std::vector<JobStatus> jobs;
  absl::MutexLock lock(&mu_);
  for (auto it = jobs_.rbegin(); it != jobs_.rend() && static_cast<int>(jobs.size()) < limit;
       ++it) {
    const JobStatus& job = it->second;
    if (!states.empty() && std::find(states.begin(), states.end(), job.state()) == states.end()) {
      continue;
    }
    jobs.push_back(job);
  }
  return jobs;
}

std::map<JobState, int> JobQueue::CountByState() const {
  std::map<JobState, int> counts;
  absl::MutexLock lock(&mu_);
  for (const auto& [number, job] : jobs_) ++counts[job.state()];
  return counts;
}

std::optional<std::string> JobQueue::active_job_id() const {
  absl::MutexLock lock(&mu_);
  if (!active_.has_value()) return std::nullopt;
  return jobs_.at(*active_).job_id();
}

int JobQueue::queued_count() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(queued_.size());
}

JobStatus* JobQueue::Find(absl::string_view job_id) {
  auto it = number_by_id_.find(job_id);
  if (it == number_by_id_.end()) return nullptr;
  return &jobs_.at(it->second);
}

absl::StatusOr<JobStatus*> JobQueue::FindOrNotFound(absl::string_view job_id) {
  JobStatus* job = Find(job_id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("no job '", job_id, "'"));
  return job;
}

absl::StatusOr<JobStatus*> JobQueue::FindActive(absl::string_view job_id) {
  absl::StatusOr<JobStatus*> job = FindOrNotFound(job_id);
  if (!job.ok()) return job.status();
  if (!IsActive((*job)->state())) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id, " is ", JobStateName((*job)->state()), ", not running"));
  }
  return job;
}

void JobQueue::MarkEnded(JobStatus& job, JobState state, absl::string_view message) {
  job.set_state(state);
  // Without a message the reason given when it began finishing stands.
  if (!message.empty()) job.set_reason(std::string(message));
  job.set_end_unix_ms(absl::ToUnixMillis(clock_.Now()));
  const int64_t number = number_by_id_.at(job.job_id());
  if (active_ == number) {
    active_.reset();
  } else {
    auto it = std::find(queued_.begin(), queued_.end(), number);
    CHECK(it != queued_.end()) << "job " << job.job_id() << " ended from neither queue nor slot";
    queued_.erase(it);
  }
  ended_.push_back(number);
  TrimHistory();
}

void JobQueue::TrimHistory() {
  while (static_cast<int>(ended_.size()) > options_.max_ended_jobs) {
    const int64_t oldest = ended_.front();
    ended_.pop_front();
    Forget(oldest);
  }
}

void JobQueue::Forget(int64_t number) {
  const JobStatus& job = jobs_.at(number);
  number_by_id_.erase(job.job_id());
  if (!job.request_id().empty()) number_by_request_.erase(job.request_id());
  jobs_.erase(number);
}

absl::Status ValidateRequestId(absl::string_view request_id) {
  constexpr size_t kMaxRequestIdLength = 128;
  if (request_id.size() > kMaxRequestIdLength) {
    return absl::InvalidArgumentError(absl::StrCat("request_id has ", request_id.size(),
                                                   " characters; at most ", kMaxRequestIdLength));
  }
  for (size_t i = 0; i < request_id.size(); ++i) {
    const unsigned char c = request_id[i];
    if (c <= ' ' || c > '~') {
      return absl::InvalidArgumentError(absl::StrCat(
          "request_id holds a character that is not printable ASCII or is a space (byte ",
          static_cast<int>(c), " at ", i, ")"));
    }
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------ recovery --

std::optional<int64_t> JobNumberFromId(absl::string_view job_id) {
  const size_t dash = job_id.rfind('-');
  if (dash == absl::string_view::npos) return std::nullopt;
  int64_t number = 0;
  if (!absl::SimpleAtoi(job_id.substr(dash + 1), &number) || number < 1) return std::nullopt;
  return number;
}

absl::StatusOr<JobStatus> JobQueue::Recover(JobStatus job, absl::string_view reason) {
  const std::optional<int64_t> number = JobNumberFromId(job.job_id());
  if (!number.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job id '", job.job_id(), "' is not <name>-<number>"));
  }
  if (job.state() == JOB_STATE_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat("job ", job.job_id(), " has no state"));
  }
  absl::MutexLock lock(&mu_);
  if (jobs_.count(*number) > 0 || number_by_id_.count(job.job_id()) > 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("job ", job.job_id(), " (number ", *number, ") is already known"));
  }
  if (!job.request_id().empty() && number_by_request_.contains(job.request_id())) {
    return absl::AlreadyExistsError(absl::StrCat("job ", job.job_id(), "'s request id ",
                                                 job.request_id(), " is already known"));
  }
  last_number_ = std::max(last_number_, *number);
  if (!IsEnded(job.state())) {
    // It starts again from the queue; the runner sets what it did before.
    job.set_state(JOB_STATE_QUEUED);
    job.set_stop_reason(STOP_REASON_UNSPECIFIED);
    job.set_start_unix_ms(0);
    job.set_end_unix_ms(0);
    job.set_reason(std::string(reason));
  }
  JobStatus& stored = jobs_[*number];
  stored = std::move(job);
  number_by_id_[stored.job_id()] = *number;
  if (!stored.request_id().empty()) number_by_request_[stored.request_id()] = *number;
  const JobStatus recovered = stored;
  if (IsEnded(stored.state())) {
    ended_.push_back(*number);
    TrimHistory();
  } else {
    queued_.push_back(*number);
  }
  return recovered;
}

void JobQueue::ReserveNumbersThrough(int64_t number) {
  absl::MutexLock lock(&mu_);
  last_number_ = std::max(last_number_, number);
}

absl::Status JobQueue::Withdraw(absl::string_view job_id) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<JobStatus*> job = FindOrNotFound(job_id);
  if (!job.ok()) return job.status();
  if ((*job)->state() != JOB_STATE_QUEUED) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job_id, " is ", JobStateName((*job)->state()), "; only a queued job is withdrawn"));
  }
  const int64_t number = number_by_id_.at((*job)->job_id());
  queued_.erase(std::find(queued_.begin(), queued_.end(), number));
  Forget(number);
  return absl::OkStatus();
}

}  // namespace coordinator
}  // namespace pstrain
