#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_SERVICE_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_SERVICE_H_

#include "grpcpp/grpcpp.h"
#include "protos/coordinator.grpc.pb.h"
#include "server/coordinator/coordinator.h"

namespace pstrain {
namespace coordinator {

// The JobService gRPC service (protos/coordinator.proto) that `pstrain` and
// other clients call: a thin adapter over Coordinator on gRPC's callback
// API, statuses converted once. WatchJob holds no thread while it waits for
// events. Thread-safe.
class JobServiceImpl final : public JobService::CallbackService {
 public:
  // `coordinator` is borrowed and must outlive the service.
  explicit JobServiceImpl(Coordinator& coordinator) : coordinator_(coordinator) {}

  JobServiceImpl(const JobServiceImpl&) = delete;
  JobServiceImpl& operator=(const JobServiceImpl&) = delete;

  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* context,
                                      const SubmitJobRequest* request,
                                      SubmitJobResponse* response) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context,
                                   const GetJobRequest* request, JobStatus* response) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* context,
                                     const ListJobsRequest* request,
                                     ListJobsResponse* response) override;
  grpc::ServerUnaryReactor* StopJob(grpc::CallbackServerContext* context,
                                    const StopJobRequest* request,
                                    StopJobResponse* response) override;
  grpc::ServerWriteReactor<JobEvent>* WatchJob(grpc::CallbackServerContext* context,
                                               const WatchJobRequest* request) override;
  grpc::ServerUnaryReactor* GetCluster(grpc::CallbackServerContext* context,
                                       const GetClusterRequest* request,
                                       ClusterStatus* response) override;
  grpc::ServerUnaryReactor* ExportModel(grpc::CallbackServerContext* context,
                                        const ExportModelRequest* request,
                                        ExportModelResponse* response) override;
  grpc::ServerUnaryReactor* Shutdown(grpc::CallbackServerContext* context,
                                     const ShutdownRequest* request,
                                     ShutdownResponse* response) override;

 private:
  Coordinator& coordinator_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_SERVICE_H_
