#include "server/coordinator/cluster_service.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status/error_reason.h"
#include "common/status/grpc_status.h"
#include "grpcpp/alarm.h"
#include "server/coordinator/internal/source_write_reactor.h"

namespace pstrain {
namespace coordinator {
namespace {

// Finishes a unary call at once with `status`, and on success moves
// `value` into `response`.
template <typename T>
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, absl::StatusOr<T> value,
                                 T* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (value.ok()) *response = *std::move(value);
  reactor->Finish(ToGrpcStatus(value.status()));
  return reactor;
}

grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// GetAssignment's long poll: answered at once when the assignment differs
// from what the caller knows, else when it changes, at the deadline, or when
// the call is cancelled. The board calls `done` exactly once, which finishes
// the call; everything the callback touches lives in shared state, since
// OnDone may delete this reactor before AssignmentBoard::Await returns.
class AssignmentPoll final : public grpc::ServerUnaryReactor {
 public:
  AssignmentPoll(Coordinator& coordinator, const GetAssignmentRequest& request,
                 Assignment* response) {
    absl::Status caller = coordinator.CheckCaller(request.task(), request.incarnation());
    if (!caller.ok()) {
      Finish(ToGrpcStatus(caller));
      return;
    }
    std::shared_ptr<PollState> state = state_;
    Coordinator* c = &coordinator;
    const TaskId task = request.task();
    const uint64_t incarnation = request.incarnation();
    auto done = [this, c, task, incarnation, response](const Assignment& assignment) {
      c->AssignmentDelivered(task, incarnation, assignment);
      *response = assignment;
      Finish(grpc::Status::OK);
    };
    Assignment now;
    const uint64_t id = coordinator.assignments().Await(
        task, {request.known_job_id(), request.known_generation()},
        coordinator.AssignmentDeadline(request.wait_ms()), done, &now);
    if (id == 0) {
      done(now);
      return;
    }
    absl::MutexLock lock(&state->mu);
    state->board = &coordinator.assignments();
    state->id = id;
  }

  void OnCancel() override {
    AssignmentBoard* board;
    uint64_t id;
    {
      absl::MutexLock lock(&state_->mu);
      board = state_->board;
      id = state_->id;
    }
    if (board != nullptr) board->Cancel(id);
  }

  void OnDone() override { delete this; }

 private:
  struct PollState {
    absl::Mutex mu;
    AssignmentBoard* board ABSL_GUARDED_BY(mu) = nullptr;
    uint64_t id ABSL_GUARDED_BY(mu) = 0;
  };
  const std::shared_ptr<PollState> state_ = std::make_shared<PollState>();
};

// JoinRound: finished when the coordinator answers (a member once its round
// commits), when the request's wait_ms passes (Unavailable ROUND_OPEN: the
// worker hears whether the job goes on, and asks again), or when the call is
// cancelled (the worker gave up, or the server shuts down), whichever comes
// first; the others then do nothing. The answer may come after OnDone
// deleted this reactor: it reaches the reactor only through shared state
// that says whether the call is still open.
class RoundJoinCall final : public grpc::ServerUnaryReactor {
 public:
  RoundJoinCall(Coordinator& coordinator, const JoinRoundRequest& request,
                JoinRoundResponse* response) {
    std::shared_ptr<CallState> state = state_;
    coordinator.JoinRound(request,
                          [this, state, response](absl::StatusOr<JoinRoundResponse> answer) {
                            if (!state->Close()) return;
                            if (answer.ok()) *response = *std::move(answer);
                            Finish(ToGrpcStatus(answer.status()));
                          });
    if (request.wait_ms() > 0) {
      std::weak_ptr<CallState> open = state_;
      const int64_t round = request.round();
      wait_.Set(absl::ToChronoTime(absl::Now() + absl::Milliseconds(request.wait_ms())),
                [this, open, round](bool fired) {
                  std::shared_ptr<CallState> state = open.lock();
                  if (!fired || state == nullptr || !state->Close()) return;
                  Finish(ToGrpcStatus(WithReason(
                      absl::UnavailableError(absl::StrCat("round ", round, " has not filled yet")),
                      ERROR_REASON_ROUND_OPEN)));
                });
    }
  }

  void OnCancel() override {
    if (state_->Close()) Finish(grpc::Status(grpc::StatusCode::CANCELLED, "join cancelled"));
  }

  void OnDone() override { delete this; }

 private:
  struct CallState {
    // Whether the caller is the one to finish the call.
    bool Close() {
      absl::MutexLock lock(&mu);
      const bool open = !finished;
      finished = true;
      return open;
    }
    absl::Mutex mu;
    bool finished ABSL_GUARDED_BY(mu) = false;
  };
  const std::shared_ptr<CallState> state_ = std::make_shared<CallState>();
  // Set with wait_ms; destroyed (cancelled) with the reactor.
  grpc::Alarm wait_;
};

}  // namespace

grpc::ServerUnaryReactor* ClusterServiceImpl::Register(grpc::CallbackServerContext* context,
                                                       const RegisterRequest* request,
                                                       RegisterResponse* response) {
  return Answer(context, coordinator_.Register(*request), response);
}

grpc::ServerUnaryReactor* ClusterServiceImpl::Heartbeat(grpc::CallbackServerContext* context,
                                                        const HeartbeatRequest* request,
                                                        HeartbeatResponse* response) {
  return Answer(context, coordinator_.Heartbeat(*request), response);
}

grpc::ServerUnaryReactor* ClusterServiceImpl::GetAssignment(grpc::CallbackServerContext* context,
                                                            const GetAssignmentRequest* request,
                                                            Assignment* response) {
  return new AssignmentPoll(coordinator_, *request, response);
}

grpc::ServerUnaryReactor* ClusterServiceImpl::ReportProgress(grpc::CallbackServerContext* context,
                                                             const ProgressReport* request,
                                                             ProgressResponse* response) {
  return Answer(context, coordinator_.ReportProgress(*request), response);
}

grpc::ServerUnaryReactor* ClusterServiceImpl::AcquireDataLease(
    grpc::CallbackServerContext* context, const AcquireDataLeaseRequest* request,
    DataLease* response) {
  return Answer(context, coordinator_.AcquireDataLease(*request), response);
}

grpc::ServerUnaryReactor* ClusterServiceImpl::CompleteDataLease(
    grpc::CallbackServerContext* context, const CompleteDataLeaseRequest* request,
    CompleteDataLeaseResponse* /*response*/) {
  return Answer(context, coordinator_.CompleteDataLease(*request));
}

grpc::ServerUnaryReactor* ClusterServiceImpl::ReportEval(grpc::CallbackServerContext* context,
                                                         const EvalReport* request,
                                                         EvalReportResponse* response) {
  return Answer(context, coordinator_.ReportEval(*request), response);
}

grpc::ServerWriteReactor<CheckpointNotification>* ClusterServiceImpl::WatchCheckpoints(
    grpc::CallbackServerContext* /*context*/, const WatchCheckpointsRequest* request) {
  absl::StatusOr<std::shared_ptr<StreamSource<CheckpointNotification>>> source =
      coordinator_.WatchCheckpoints(*request);
  if (!source.ok()) {
    class Refused final : public grpc::ServerWriteReactor<CheckpointNotification> {
     public:
      explicit Refused(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
      void OnDone() override { delete this; }
    };
    return new Refused(source.status());
  }
  return new internal::SourceWriteReactor<CheckpointNotification>(*std::move(source));
}

grpc::ServerUnaryReactor* ClusterServiceImpl::ReleaseCheckpoint(
    grpc::CallbackServerContext* context, const ReleaseCheckpointRequest* request,
    ReleaseCheckpointResponse* /*response*/) {
  return Answer(context, coordinator_.ReleaseCheckpoint(*request));
}

grpc::ServerUnaryReactor* ClusterServiceImpl::JoinRound(grpc::CallbackServerContext* /*context*/,
                                                        const JoinRoundRequest* request,
                                                        JoinRoundResponse* response) {
  return new RoundJoinCall(coordinator_, *request, response);
}

grpc::ServerUnaryReactor* ClusterServiceImpl::Leave(grpc::CallbackServerContext* context,
                                                    const LeaveRequest* request,
                                                    LeaveResponse* /*response*/) {
  return Answer(context, coordinator_.Leave(*request));
}

}  // namespace coordinator
}  // namespace pstrain
