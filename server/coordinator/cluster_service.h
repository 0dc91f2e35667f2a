#ifndef PSTRAIN_SERVER_COORDINATOR_CLUSTER_SERVICE_H_
#define PSTRAIN_SERVER_COORDINATOR_CLUSTER_SERVICE_H_

#include "grpcpp/grpcpp.h"
#include "protos/coordinator.grpc.pb.h"
#include "server/coordinator/coordinator.h"

namespace pstrain {
namespace coordinator {

// The ClusterService gRPC service (protos/coordinator.proto) that parameter
// servers, workers and evaluators call: a thin adapter over Coordinator on
// gRPC's callback API. Every call first checks its caller's incarnation
// (except Register); statuses are Coordinator's, converted once. The long
// poll (GetAssignment) and the checkpoint stream hold no thread while they
// wait. Thread-safe.
class ClusterServiceImpl final : public ClusterService::CallbackService {
 public:
  // `coordinator` is borrowed and must outlive the service.
  explicit ClusterServiceImpl(Coordinator& coordinator) : coordinator_(coordinator) {}

  ClusterServiceImpl(const ClusterServiceImpl&) = delete;
  ClusterServiceImpl& operator=(const ClusterServiceImpl&) = delete;

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* context,
                                     const RegisterRequest* request,
                                     RegisterResponse* response) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* context,
                                      const HeartbeatRequest* request,
                                      HeartbeatResponse* response) override;
  grpc::ServerUnaryReactor* GetAssignment(grpc::CallbackServerContext* context,
                                          const GetAssignmentRequest* request,
                                          Assignment* response) override;
  grpc::ServerUnaryReactor* ReportProgress(grpc::CallbackServerContext* context,
                                           const ProgressReport* request,
                                           ProgressResponse* response) override;
  grpc::ServerUnaryReactor* AcquireDataLease(grpc::CallbackServerContext* context,
                                             const AcquireDataLeaseRequest* request,
                                             DataLease* response) override;
  grpc::ServerUnaryReactor* CompleteDataLease(grpc::CallbackServerContext* context,
                                              const CompleteDataLeaseRequest* request,
                                              CompleteDataLeaseResponse* response) override;
  grpc::ServerUnaryReactor* ReportEval(grpc::CallbackServerContext* context,
                                       const EvalReport* request,
                                       EvalReportResponse* response) override;
  grpc::ServerWriteReactor<CheckpointNotification>* WatchCheckpoints(
      grpc::CallbackServerContext* context, const WatchCheckpointsRequest* request) override;
  grpc::ServerUnaryReactor* ReleaseCheckpoint(grpc::CallbackServerContext* context,
                                              const ReleaseCheckpointRequest* request,
                                              ReleaseCheckpointResponse* response) override;
  // Finished when the coordinator answers (for a member, once its round
  // commits) or the call is cancelled; no thread waits meanwhile.
  grpc::ServerUnaryReactor* JoinRound(grpc::CallbackServerContext* context,
                                      const JoinRoundRequest* request,
                                      JoinRoundResponse* response) override;
  grpc::ServerUnaryReactor* Leave(grpc::CallbackServerContext* context,
                                  const LeaveRequest* request, LeaveResponse* response) override;

 private:
  Coordinator& coordinator_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_CLUSTER_SERVICE_H_
