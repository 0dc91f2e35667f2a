#ifndef PSTRAIN_CLIENT_JOB_SERVICE_CLIENT_H_
#define PSTRAIN_CLIENT_JOB_SERVICE_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/net/channel_security.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {

// The coordinator's JobService as the commands call it: every call has a
// deadline, returns absl::Status, and an unreachable coordinator is
// reported as Unavailable saying which address and what to try.
// Thread-safe (gRPC stubs are).
class JobServiceClient {
 public:
  // `address` is host:port; nothing is dialled until the first call.
  // `security`: TLS and the client token (ClientChannelSecurityFromFlags
  // for the CLI); default plaintext without a token.
  explicit JobServiceClient(std::string address,
                            absl::Duration call_timeout = absl::Seconds(30),
                            const ChannelSecurity& security = {});

  const std::string& address() const { return address_; }

  // InvalidArgument: the spec is invalid, naming the field. A submit
  // without a request id is given one (NewRequestId), and sent again with
  // it, up to kSubmitAttempts in all, when the coordinator does not answer
  // within the call timeout: a job it queued meanwhile is answered, not
  // queued twice (SubmitJobRequest.request_id).
  absl::StatusOr<SubmitJobResponse> Submit(const SubmitJobRequest& request);
  static constexpr int kSubmitAttempts = 3;
  // NotFound: no such job.
  absl::StatusOr<JobStatus> Get(const std::string& job_id);
  absl::StatusOr<ListJobsResponse> List(int limit);
  // NotFound: no such job.
  absl::StatusOr<JobStatus> Stop(const std::string& job_id, bool immediately);
  absl::StatusOr<ClusterStatus> GetCluster();
  // FailedPrecondition: a job runs and `stop_running_job` is false.
  absl::Status Shutdown(bool stop_running_job);

  // For streams (WatchJob), which the caller drives itself.
  JobService::Stub& stub() { return *stub_; }

  // The status of a finished call, with Unavailable (and a deadline hit
  // before the channel ever connected) rewritten to say that the
  // coordinator at address() cannot be reached and how to start one.
  absl::Status Explain(const grpc::Status& status);

 private:
  // One unary call with the call timeout, its status explained.
  template <typename Request, typename Response>
  absl::Status Call(grpc::Status (JobService::Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                    const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + call_timeout_));
    return Explain((stub_.get()->*method)(&context, request, response));
  }

  const std::string address_;
  const absl::Duration call_timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<JobService::Stub> stub_;
};

// 128 random bits as 32 hex digits: a submit's request id.
std::string NewRequestId();

// "cannot reach the coordinator at ADDRESS (WHY); start one with ..." for
// `why` as gRPC words it (shortened to "connection refused" and the like).
std::string UnreachableMessage(const std::string& address, const std::string& why);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_JOB_SERVICE_CLIENT_H_
