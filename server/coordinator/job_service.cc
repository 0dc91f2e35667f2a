#include "server/coordinator/job_service.h"

#include <memory>
#include <utility>

#include "common/status/grpc_status.h"
#include "server/coordinator/internal/source_write_reactor.h"

namespace pstrain {
namespace coordinator {
namespace {

template <typename T>
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, absl::StatusOr<T> value,
                                 T* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (value.ok()) *response = *std::move(value);
  reactor->Finish(ToGrpcStatus(value.status()));
  return reactor;
}

absl::Status RequireJobId(const std::string& job_id) {
  if (job_id.empty()) return absl::InvalidArgumentError("job_id is required");
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* JobServiceImpl::SubmitJob(grpc::CallbackServerContext* context,
                                                    const SubmitJobRequest* request,
                                                    SubmitJobResponse* response) {
  return Answer(context, coordinator_.SubmitJob(*request), response);
}

grpc::ServerUnaryReactor* JobServiceImpl::GetJob(grpc::CallbackServerContext* context,
                                                 const GetJobRequest* request,
                                                 JobStatus* response) {
  if (absl::Status s = RequireJobId(request->job_id()); !s.ok()) {
    return Answer<JobStatus>(context, s, response);
  }
  return Answer(context, coordinator_.GetJob(request->job_id()), response);
}

grpc::ServerUnaryReactor* JobServiceImpl::ListJobs(grpc::CallbackServerContext* context,
                                                   const ListJobsRequest* request,
                                                   ListJobsResponse* response) {
  return Answer(context, coordinator_.ListJobs(*request), response);
}

grpc::ServerUnaryReactor* JobServiceImpl::StopJob(grpc::CallbackServerContext* context,
                                                  const StopJobRequest* request,
                                                  StopJobResponse* response) {
  if (absl::Status s = RequireJobId(request->job_id()); !s.ok()) {
    return Answer<StopJobResponse>(context, s, response);
  }
  return Answer(context, coordinator_.StopJob(*request), response);
}

grpc::ServerWriteReactor<JobEvent>* JobServiceImpl::WatchJob(
    grpc::CallbackServerContext* /*context*/, const WatchJobRequest* request) {
  absl::StatusOr<std::shared_ptr<StreamSource<JobEvent>>> source =
      RequireJobId(request->job_id()).ok()
          ? coordinator_.WatchJob(*request)
          : absl::StatusOr<std::shared_ptr<StreamSource<JobEvent>>>(
                absl::InvalidArgumentError("job_id is required"));
  if (!source.ok()) {
    class Refused final : public grpc::ServerWriteReactor<JobEvent> {
     public:
      explicit Refused(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
      void OnDone() override { delete this; }
    };
    return new Refused(source.status());
  }
  return new internal::SourceWriteReactor<JobEvent>(*std::move(source));
}

grpc::ServerUnaryReactor* JobServiceImpl::GetCluster(grpc::CallbackServerContext* context,
                                                     const GetClusterRequest* /*request*/,
                                                     ClusterStatus* response) {
  return Answer(context, absl::StatusOr<ClusterStatus>(coordinator_.GetCluster()), response);
}

grpc::ServerUnaryReactor* JobServiceImpl::ExportModel(grpc::CallbackServerContext* context,
                                                      const ExportModelRequest* request,
                                                      ExportModelResponse* response) {
  if (absl::Status s = RequireJobId(request->job_id()); !s.ok()) {
    return Answer<ExportModelResponse>(context, s, response);
  }
  return Answer(context, coordinator_.ExportModel(*request), response);
}

grpc::ServerUnaryReactor* JobServiceImpl::Shutdown(grpc::CallbackServerContext* context,
                                                   const ShutdownRequest* request,
                                                   ShutdownResponse* /*response*/) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(coordinator_.Shutdown(*request)));
  return reactor;
}

}  // namespace coordinator
}  // namespace pstrain
