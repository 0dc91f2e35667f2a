#include "bench/sim/light_worker.h"

#include <algorithm>
#include <utility>

#include "common/status/error_reason.h"
#include "common/status/grpc_status.h"

namespace pstrain {
namespace bench {

template <typename Request, typename Response>
struct LightWorker::UnaryCall {
  grpc::ClientContext context;
  Request request;
  Response response;
  absl::Time started;
};

template <typename Request, typename Response, typename Start, typename Then>
void LightWorker::Send(SimCall kind, Start start, Request request, Then then) {
  auto* call = new UnaryCall<Request, Response>;
  call->request = std::move(request);
  call->started = absl::Now();
  call->context.set_deadline(absl::ToChronoTime(call->started + options_.call_timeout));
  in_flight_.fetch_add(1);
  start(coordinator_.async(), &call->context, &call->request, &call->response,
        [this, call, kind, then = std::move(then)](grpc::Status status) {
          const absl::Status converted = FromGrpcStatus(status);
          tally_.Record(kind, converted, absl::Now() - call->started);
          then(converted, call->response);
          delete call;
          in_flight_.fetch_sub(1);
        });
}

LightWorker::LightWorker(int index, uint64_t incarnation, const LightWorkerOptions& options,
                         ClusterService::Stub& coordinator, ParameterServer::Stub& shard,
                         CallTally& tally, std::atomic<int64_t>& in_flight)
    : index_(index),
      incarnation_(incarnation),
      push_incarnation_(PushIncarnation(absl::Now(), static_cast<uint64_t>(index))),
      options_(options),
      coordinator_(coordinator),
      shard_(shard),
      tally_(tally),
      in_flight_(in_flight) {}

TaskId LightWorker::Task() const {
  TaskId task;
  task.set_type(TASK_TYPE_WORKER);
  task.set_index(index_);
  return task;
}

void LightWorker::OnHeartbeatDue() {
  bool beat = false;
  std::string job_id;
  int64_t step = 0;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    if (registering_ || beating_) {
      tally_.RecordOverlap(registering_ ? SimCall::kRegister : SimCall::kHeartbeat);
      return;
    }
    if (registered_) {
      beating_ = beat = true;
      job_id = assignment_.job_id();
      step = global_step_;
    } else {
      registering_ = true;
    }
  }
  if (beat) {
    Heartbeat(job_id, step);
  } else {
    Register();
  }
}

void LightWorker::Register() {
  RegisterRequest request;
  *request.mutable_task() = Task();
  request.set_incarnation(incarnation_);
  Send<RegisterRequest, RegisterResponse>(
      SimCall::kRegister,
      [](auto* async, auto* context, auto* request, auto* response, auto done) {
        async->Register(context, request, response, std::move(done));
      },
      std::move(request),
      [this](const absl::Status& status, const RegisterResponse&) {
        absl::MutexLock lock(&mu_);
        registering_ = false;
        registered_ = status.ok();
      });
}

void LightWorker::Heartbeat(const std::string& job_id, int64_t step) {
  HeartbeatRequest request;
  *request.mutable_task() = Task();
  request.set_incarnation(incarnation_);
  request.set_job_id(job_id);
  request.set_step(step);
  request.set_health(MEMBER_HEALTH_OK);
  Send<HeartbeatRequest, HeartbeatResponse>(
      SimCall::kHeartbeat,
      [](auto* async, auto* context, auto* request, auto* response, auto done) {
        async->Heartbeat(context, request, response, std::move(done));
      },
      std::move(request),
      [this](const absl::Status& status, const HeartbeatResponse& answer) {
        bool fetch = false;
        std::shared_ptr<PushPullStream> ended;
        {
          absl::MutexLock lock(&mu_);
          beating_ = false;
          if (!status.ok()) {
            if (NeedsRegistration(status)) registered_ = false;
            return;
          }
          if (!answer.job_id().empty() && answer.job_id() != assignment_.job_id() && !assigning_) {
            assigning_ = fetch = true;
          } else if (answer.job_id().empty() && !assignment_.job_id().empty()) {
            // The job ended: drop its work.
            assignment_.Clear();
            lease_id_ = 0;
            ended = std::move(stream_);
          }
        }
        if (ended != nullptr) ended->Close();
        if (fetch) FetchAssignment();
      });
}

void LightWorker::FetchAssignment() {
  GetAssignmentRequest request;
  *request.mutable_task() = Task();
  request.set_incarnation(incarnation_);
  request.set_wait_ms(0);
  Send<GetAssignmentRequest, Assignment>(
      SimCall::kAssignment,
      [](auto* async, auto* context, auto* request, auto* response, auto done) {
        async->GetAssignment(context, request, response, std::move(done));
      },
      std::move(request),
      [this](const absl::Status& status, const Assignment& answer) {
        absl::MutexLock lock(&mu_);
        assigning_ = false;
        if (!status.ok()) {
          if (NeedsRegistration(status)) registered_ = false;
          return;
        }
        if (answer.job_id().empty()) return;
        assignment_ = answer;
        // The light worker builds no model, and with thousands of members
        // a copy of every placement each would be most of the simulator's
        // memory: the variables of shard 0 are all it keeps.
        assignment_.clear_spec();
        assignment_.clear_placements();
        traffic_ = ShardTraffic();
        traffic_.job_id = answer.job_id();
        traffic_.generation = answer.generation();
        traffic_.variables = VariablesOf(answer);
        traffic_.dense = options_.push_dense;
        traffic_.sparse = options_.push_sparse;
        traffic_.rows = options_.rows;
        lease_id_ = 0;
        end_of_data_ = false;
        // Reports spread over the members as leases are (AcquireLease).
        unreported_steps_ = index_ % std::max(1, options_.steps_per_report);
      });
}

void LightWorker::OnStepDue() {
  enum { kNothing, kLease, kStep, kCount } what = kNothing;
  {
    absl::MutexLock lock(&mu_);
    if (closed_ || assignment_.job_id().empty()) return;
    if (stepping_) {
      tally_.RecordOverlap(SimCall::kPush);
      return;
    }
    if (lease_id_ == 0) {
      if (leasing_ || end_of_data_) return;
      leasing_ = true;
      what = kLease;
    } else {
      stepping_ = true;
      what = options_.push_dense || options_.push_sparse ? kStep : kCount;
      if (what == kStep && stream_ == nullptr) stream_ = PushPullStream::Open(shard_);
    }
  }
  if (what == kLease) AcquireLease();
  if (what == kStep) Pull();
  if (what == kCount) EndStep(false);
}

void LightWorker::Pull() {
  std::shared_ptr<PushPullStream> stream;
  PushPullRequest message;
  {
    absl::MutexLock lock(&mu_);
    stream = stream_;
    if (stream == nullptr) {  // closed meanwhile
      stepping_ = false;
      return;
    }
    message = PullMessage(traffic_, (steps_ * 7919 + index_ * 104729) % traffic_.id_space);
  }
  const absl::Time started = absl::Now();
  in_flight_.fetch_add(1);
  stream->Exchange({std::move(message)},
                   [this, started](absl::Status status, std::vector<PushPullResponse> answers) {
                     tally_.Record(SimCall::kPull, status, absl::Now() - started);
                     bool push = false;
                     std::shared_ptr<PushPullStream> broken;
                     {
                       absl::MutexLock lock(&mu_);
                       if (status.ok()) {
                         if (!answers.empty())
                           version_ = std::max(version_, answers.front().pull().version());
                         if (!ShapesKnown(traffic_.variables))
                           LearnShapes(answers, &traffic_.variables).IgnoreError();
                         push = !closed_;
                       } else {
                         broken = std::move(stream_);
                       }
                       if (!push) stepping_ = false;
                     }
                     if (broken != nullptr) broken->Close();
                     if (push) Push();
                     in_flight_.fetch_sub(1);
                   });
}

void LightWorker::Push() {
  std::shared_ptr<PushPullStream> stream;
  std::vector<PushPullRequest> messages;
  {
    absl::MutexLock lock(&mu_);
    stream = stream_;
    PushId id;
    id.set_worker(assignment_.worker_rank());
    id.set_incarnation(push_incarnation_);
    id.set_sequence(++push_sequence_);
    messages =
        PushMessages(traffic_, id, version_, (steps_ * 7919 + index_ * 104729) % traffic_.id_space);
  }
  if (stream == nullptr) return EndStep(false);
  const absl::Time started = absl::Now();
  in_flight_.fetch_add(1);
  stream->Exchange(std::move(messages), [this, started](absl::Status status,
                                                        std::vector<PushPullResponse> answers) {
    bool applied = false;
    int64_t version = 0;
    if (status.ok() && !answers.empty()) {
      const PushResult& result = answers.front().push();
      version = result.version();
      applied = result.outcome() == PUSH_OUTCOME_APPLIED;
      if (!applied && result.outcome() != PUSH_OUTCOME_DUPLICATE) {
        status = result.has_status() ? FromStatusProto(result.status())
                                     : absl::AbortedError(PushOutcome_Name(result.outcome()));
      }
    }
    tally_.Record(SimCall::kPush, status, absl::Now() - started);
    std::shared_ptr<PushPullStream> broken;
    {
      absl::MutexLock lock(&mu_);
      version_ = std::max(version_, version);
      if (applied) ++applied_pushes_;
      if (absl::IsUnavailable(status)) broken = std::move(stream_);
    }
    if (broken != nullptr) broken->Close();
    EndStep(applied);
    in_flight_.fetch_sub(1);
  });
}

void LightWorker::EndStep(bool /*pushed*/) {
  int64_t report_steps = 0;
  int64_t version = 0;
  int64_t finished_lease = 0;
  {
    absl::MutexLock lock(&mu_);
    stepping_ = false;
    ++steps_;
    ++unreported_steps_;
    lease_records_left_ -= options_.batch_size;
    if (unreported_steps_ >= options_.steps_per_report) {
      report_steps = std::exchange(unreported_steps_, 0);
      version = version_;
    }
    if (lease_id_ != 0 && lease_records_left_ <= 0 && !leasing_) {
      finished_lease = std::exchange(lease_id_, 0);
      leasing_ = true;
    }
  }
  if (report_steps > 0) ReportProgress(report_steps, report_steps * options_.batch_size, version);
  if (finished_lease != 0) CompleteLease(finished_lease);
}

void LightWorker::AcquireLease() {
  AcquireDataLeaseRequest request;
  *request.mutable_task() = Task();
  request.set_incarnation(incarnation_);
  {
    absl::MutexLock lock(&mu_);
    request.set_job_id(assignment_.job_id());
  }
  Send<AcquireDataLeaseRequest, DataLease>(
      SimCall::kAcquireLease,
      [](auto* async, auto* context, auto* request, auto* response, auto done) {
        async->AcquireDataLease(context, request, response, std::move(done));
      },
      std::move(request),
      [this](const absl::Status& status, const DataLease& lease) {
        absl::MutexLock lock(&mu_);
        leasing_ = false;
        if (!status.ok()) {
          if (NeedsRegistration(status)) registered_ = false;
          return;  // asked again at the next step
        }
        if (lease.end_of_data()) {
          end_of_data_ = true;
          return;
        }
        lease_id_ = lease.lease_id();
        lease_records_left_ = lease.range().end() - lease.range().begin();
        if (completed_leases_ == 0 && !first_lease_skewed_) {
          // Every member takes its first lease at the job's start; ending
          // member i's first lease (i mod steps a lease) steps early spreads
          // the lease calls evenly over time instead of in waves.
          first_lease_skewed_ = true;
          const int64_t steps = std::max<int64_t>(1, lease_records_left_ / options_.batch_size);
          lease_records_left_ -= (index_ % steps) * options_.batch_size;
        }
      });
}

void LightWorker::CompleteLease(int64_t lease_id) {
  CompleteDataLeaseRequest request;
  *request.mutable_task() = Task();
  request.set_incarnation(incarnation_);
  request.set_lease_id(lease_id);
  {
    absl::MutexLock lock(&mu_);
    request.set_job_id(assignment_.job_id());
  }
  Send<CompleteDataLeaseRequest, CompleteDataLeaseResponse>(
      SimCall::kCompleteLease,
      [](auto* async, auto* context, auto* request, auto* response, auto done) {
        async->CompleteDataLease(context, request, response, std::move(done));
      },
      std::move(request),
      [this](const absl::Status& status, const CompleteDataLeaseResponse&) {
        bool again = false;
        {
          absl::MutexLock lock(&mu_);
          if (status.ok()) ++completed_leases_;
          if (NeedsRegistration(status)) registered_ = false;
          leasing_ = false;
          if (!closed_ && !end_of_data_ && !assignment_.job_id().empty()) {
            leasing_ = again = true;
          }
        }
        if (again) AcquireLease();
      });
}

void LightWorker::ReportProgress(int64_t steps, int64_t examples, int64_t version) {
  ProgressReport report;
  *report.mutable_task() = Task();
  report.set_incarnation(incarnation_);
  report.set_steps(steps);
  report.set_examples(examples);
  report.set_loss(0.5);
  report.set_parameter_version(version);
  {
    absl::MutexLock lock(&mu_);
    report.set_job_id(assignment_.job_id());
    report.set_generation(assignment_.generation());
  }
  Send<ProgressReport, ProgressResponse>(
      SimCall::kProgress,
      [](auto* async, auto* context, auto* request, auto* response, auto done) {
        async->ReportProgress(context, request, response, std::move(done));
      },
      std::move(report),
      [this](const absl::Status& status, const ProgressResponse& answer) {
        absl::MutexLock lock(&mu_);
        if (status.ok()) global_step_ = std::max(global_step_, answer.global_step());
        if (NeedsRegistration(status)) registered_ = false;
      });
}

void LightWorker::Close() {
  std::shared_ptr<PushPullStream> stream;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    stream = std::move(stream_);
  }
  if (stream != nullptr) stream->Close();
}

LightWorkerState LightWorker::state() const {
  absl::MutexLock lock(&mu_);
  LightWorkerState state;
  state.registered = registered_;
  state.job_id = assignment_.job_id();
  state.steps = steps_;
  state.applied_pushes = applied_pushes_;
  state.completed_leases = completed_leases_;
  return state;
}

Assignment LightWorker::assignment() const {
  absl::MutexLock lock(&mu_);
  return assignment_;
}

ShardTraffic LightWorker::traffic() const {
  absl::MutexLock lock(&mu_);
  return traffic_;
}

}  // namespace bench
}  // namespace pstrain
