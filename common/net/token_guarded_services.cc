#include "common/net/token_guarded_services.h"

#include "common/net/raw_push_pull_service.h"
#include "protos/coordinator.grpc.pb.h"
#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {
namespace {

// Reactors that finish a refused streaming call at once.
template <typename Response>
class RefusedWriteReactor final : public grpc::ServerWriteReactor<Response> {
 public:
  explicit RefusedWriteReactor(const grpc::Status& status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

template <typename Request, typename Response>
class RefusedBidiReactor final : public grpc::ServerBidiReactor<Request, Response> {
 public:
  explicit RefusedBidiReactor(const grpc::Status& status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

grpc::ServerUnaryReactor* Refused(grpc::CallbackServerContext* context,
                                  const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

// One unary method: check, then hand on to the inner service.
#define PSTRAIN_GUARDED_UNARY(SERVICE, METHOD, REQUEST, RESPONSE, SCOPE)                           \
  grpc::ServerUnaryReactor* METHOD(grpc::CallbackServerContext* context, const REQUEST* request,   \
                                   RESPONSE* response) override {                                  \
    grpc::Status status = authenticator_.Check(SCOPE, "/pstrain." #SERVICE "/" #METHOD, *context); \
    if (!status.ok()) return Refused(context, status);                                             \
    return inner_.METHOD(context, request, response);                                              \
  }

class GuardedJobService final : public JobService::CallbackService {
 public:
  GuardedJobService(JobService::CallbackService& inner, const TokenAuthenticator& authenticator)
      : inner_(inner), authenticator_(authenticator) {}

  PSTRAIN_GUARDED_UNARY(JobService, SubmitJob, SubmitJobRequest, SubmitJobResponse,
                        TokenScope::kClientAdmin)
  PSTRAIN_GUARDED_UNARY(JobService, StopJob, StopJobRequest, StopJobResponse,
                        TokenScope::kClientAdmin)
  PSTRAIN_GUARDED_UNARY(JobService, ExportModel, ExportModelRequest, ExportModelResponse,
                        TokenScope::kClientAdmin)
  PSTRAIN_GUARDED_UNARY(JobService, Shutdown, ShutdownRequest, ShutdownResponse,
                        TokenScope::kClientAdmin)
  PSTRAIN_GUARDED_UNARY(JobService, GetJob, GetJobRequest, JobStatus, TokenScope::kClientRead)
  PSTRAIN_GUARDED_UNARY(JobService, ListJobs, ListJobsRequest, ListJobsResponse,
                        TokenScope::kClientRead)
  PSTRAIN_GUARDED_UNARY(JobService, GetCluster, GetClusterRequest, ClusterStatus,
                        TokenScope::kClientRead)

  grpc::ServerWriteReactor<JobEvent>* WatchJob(grpc::CallbackServerContext* context,
                                               const WatchJobRequest* request) override {
    grpc::Status status =
        authenticator_.Check(TokenScope::kClientRead, "/pstrain.JobService/WatchJob", *context);
    if (!status.ok()) return new RefusedWriteReactor<JobEvent>(status);
    return inner_.WatchJob(context, request);
  }

 private:
  JobService::CallbackService& inner_;
  const TokenAuthenticator& authenticator_;
};

class GuardedClusterService final : public ClusterService::CallbackService {
 public:
  GuardedClusterService(ClusterService::CallbackService& inner,
                        const TokenAuthenticator& authenticator)
      : inner_(inner), authenticator_(authenticator) {}

  PSTRAIN_GUARDED_UNARY(ClusterService, Register, RegisterRequest, RegisterResponse,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ClusterService, Heartbeat, HeartbeatRequest, HeartbeatResponse,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ClusterService, GetAssignment, GetAssignmentRequest, Assignment,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ClusterService, ReportProgress, ProgressReport, ProgressResponse,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ClusterService, AcquireDataLease, AcquireDataLeaseRequest, DataLease,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ClusterService, CompleteDataLease, CompleteDataLeaseRequest,
                        CompleteDataLeaseResponse, TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ClusterService, ReportEval, EvalReport, EvalReportResponse,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ClusterService, ReleaseCheckpoint, ReleaseCheckpointRequest,
                        ReleaseCheckpointResponse, TokenScope::kCluster)

  grpc::ServerWriteReactor<CheckpointNotification>* WatchCheckpoints(
      grpc::CallbackServerContext* context, const WatchCheckpointsRequest* request) override {
    grpc::Status status = authenticator_.Check(
        TokenScope::kCluster, "/pstrain.ClusterService/WatchCheckpoints", *context);
    if (!status.ok()) return new RefusedWriteReactor<CheckpointNotification>(status);
    return inner_.WatchCheckpoints(context, request);
  }

 private:
  ClusterService::CallbackService& inner_;
  const TokenAuthenticator& authenticator_;
};

// `Base` is ParameterServer::CallbackService, or RawPushPullParameterServer
// (PushPull on ByteBuffers, as the shard serves it); PushPull's messages are
// Request and Response.
template <typename Base, typename Request, typename Response>
class GuardedParameterServer final : public Base {
 public:
  GuardedParameterServer(Base& inner, const TokenAuthenticator& authenticator)
      : inner_(inner), authenticator_(authenticator) {}

  PSTRAIN_GUARDED_UNARY(ParameterServer, CreateVariables, CreateVariablesRequest,
                        CreateVariablesResponse, TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ParameterServer, DropJob, DropJobRequest, DropJobResponse,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ParameterServer, Pull, PullRequest, PullResponse, TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ParameterServer, Snapshot, SnapshotRequest, SnapshotResponse,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ParameterServer, Restore, RestoreRequest, RestoreResponse,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ParameterServer, ReadPushLedger, ReadPushLedgerRequest, PushLedger,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ParameterServer, CommitRound, CommitRoundRequest, CommitRoundResponse,
                        TokenScope::kCluster)
  // A lane is granted only to a caller that passed this check: the grant
  // is what the shard's Unix socket asks for.
  PSTRAIN_GUARDED_UNARY(ParameterServer, OpenLane, OpenLaneRequest, OpenLaneResponse,
                        TokenScope::kCluster)
  PSTRAIN_GUARDED_UNARY(ParameterServer, ChangeReplica, ChangeReplicaRequest,
                        ChangeReplicaResponse, TokenScope::kCluster)

  grpc::ServerBidiReactor<ReplicateRequest, ReplicateResponse>* Replicate(
      grpc::CallbackServerContext* context) override {
    grpc::Status status =
        authenticator_.Check(TokenScope::kCluster, "/pstrain.ParameterServer/Replicate", *context);
    if (!status.ok()) return new RefusedBidiReactor<ReplicateRequest, ReplicateResponse>(status);
    return inner_.Replicate(context);
  }

  grpc::ServerBidiReactor<Request, Response>* PushPull(
      grpc::CallbackServerContext* context) override {
    grpc::Status status =
        authenticator_.Check(TokenScope::kCluster, "/pstrain.ParameterServer/PushPull", *context);
    if (!status.ok()) return new RefusedBidiReactor<Request, Response>(status);
    return inner_.PushPull(context);
  }

 private:
  Base& inner_;
  const TokenAuthenticator& authenticator_;
};

#undef PSTRAIN_GUARDED_UNARY

}  // namespace

absl::StatusOr<std::unique_ptr<grpc::Service>> GuardWithTokens(
    grpc::Service* service, const TokenAuthenticator& authenticator) {
  if (auto* jobs = dynamic_cast<JobService::CallbackService*>(service)) {
    return std::make_unique<GuardedJobService>(*jobs, authenticator);
  }
  if (auto* cluster = dynamic_cast<ClusterService::CallbackService*>(service)) {
    return std::make_unique<GuardedClusterService>(*cluster, authenticator);
  }
  if (auto* ps = dynamic_cast<ParameterServer::CallbackService*>(service)) {
    return std::make_unique<GuardedParameterServer<ParameterServer::CallbackService,
                                                   PushPullRequest, PushPullResponse>>(
        *ps, authenticator);
  }
  if (auto* ps = dynamic_cast<RawPushPullParameterServer*>(service)) {
    return std::make_unique<
        GuardedParameterServer<RawPushPullParameterServer, grpc::ByteBuffer, grpc::ByteBuffer>>(
        *ps, authenticator);
  }
  return absl::InvalidArgumentError(
      "tokens are set but the server has a service that cannot check them");
}

}  // namespace pstrain
