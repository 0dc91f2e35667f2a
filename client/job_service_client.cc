#include "client/job_service_client.h"

#include <cstdint>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "common/status/status_macros.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace pstrain {
namespace {

// gRPC's words for a failed connection are long ("failed to connect to all
// addresses; last error: UNKNOWN: ipv4:127.0.0.1:7070: Failed to connect to
// remote host: Connection refused"); the last clause is what a person needs.
std::string ShortReason(const std::string& message) {
  const std::string lower = absl::AsciiStrToLower(message);
  for (const char* known : {"connection refused", "dns resolution failed", "no route to host",
                            "network is unreachable", "connection timed out",
                            "connection reset by peer"}) {
    if (absl::StrContains(lower, known)) return known;
  }
  return message;
}

}  // namespace

std::string UnreachableMessage(const std::string& address, const std::string& why) {
  return absl::StrCat(
      "cannot reach the coordinator at ", address, " (", ShortReason(why),
      "); start one with `pstrain local --keep_running` or set --coordinator_address / "
      "PSTRAIN_COORDINATOR");
}

JobServiceClient::JobServiceClient(std::string address, absl::Duration call_timeout,
                                   const ChannelSecurity& security)
    : address_(std::move(address)),
      call_timeout_(call_timeout),
      channel_(CreateSecureChannel(address_, security)),
      stub_(JobService::NewStub(channel_)) {}

absl::Status JobServiceClient::Explain(const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED &&
       channel_->GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_READY)) {
    return absl::UnavailableError(UnreachableMessage(address_, status.error_message()));
  }
  return FromGrpcStatus(status);
}

absl::StatusOr<SubmitJobResponse> JobServiceClient::Submit(const SubmitJobRequest& request) {
  SubmitJobRequest identified = request;
  if (identified.request_id().empty() && !identified.validate_only()) {
    identified.set_request_id(NewRequestId());
  }
  absl::Status status;
  for (int attempt = 1; attempt <= kSubmitAttempts; ++attempt) {
    SubmitJobResponse response;
    status = Call(&JobService::Stub::SubmitJob, identified, &response);
    if (status.ok()) return response;
    // The coordinator took the request and did not answer in time: it may
    // have queued the job. The same request id finds that job instead of
    // queueing another.
    if (!absl::IsDeadlineExceeded(status)) break;
  }
  return status;
}

std::string NewRequestId() {
  std::random_device device;
  std::uniform_int_distribution<uint32_t> word;
  std::string id;
  for (int i = 0; i < 4; ++i) absl::StrAppend(&id, absl::Hex(word(device), absl::kZeroPad8));
  return id;
}

absl::StatusOr<JobStatus> JobServiceClient::Get(const std::string& job_id) {
  GetJobRequest request;
  request.set_job_id(job_id);
  JobStatus response;
  RETURN_IF_ERROR(Call(&JobService::Stub::GetJob, request, &response));
  return response;
}

absl::StatusOr<ListJobsResponse> JobServiceClient::List(int limit) {
  ListJobsRequest request;
  request.set_limit(limit);
  ListJobsResponse response;
  RETURN_IF_ERROR(Call(&JobService::Stub::ListJobs, request, &response));
  return response;
}

absl::StatusOr<JobStatus> JobServiceClient::Stop(const std::string& job_id, bool immediately) {
  StopJobRequest request;
  request.set_job_id(job_id);
  request.set_immediately(immediately);
  StopJobResponse response;
  RETURN_IF_ERROR(Call(&JobService::Stub::StopJob, request, &response));
  return response.status();
}

absl::StatusOr<ClusterStatus> JobServiceClient::GetCluster() {
  ClusterStatus response;
  RETURN_IF_ERROR(Call(&JobService::Stub::GetCluster, GetClusterRequest(), &response));
  return response;
}

absl::Status JobServiceClient::Shutdown(bool stop_running_job) {
  ShutdownRequest request;
  request.set_stop_running_job(stop_running_job);
  ShutdownResponse response;
  RETURN_IF_ERROR(Call(&JobService::Stub::Shutdown, request, &response));
  return absl::OkStatus();
}

}  // namespace pstrain
