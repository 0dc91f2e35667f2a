#include "server/coordinator/cluster_service.h"

#include <memory>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "common/status/grpc_status.h"
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
        task, request.known_job_id(), request.known_generation(),
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

}  // namespace coordinator
}  // namespace pstrain
