#include "bench/common/job_submission.h"

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/client_context.h"

namespace pstrain {
namespace bench {

absl::StatusOr<std::string> SubmitJobSpec(JobService::StubInterface& jobs,
                                          const std::string& spec_text, absl::Duration timeout) {
  SubmitJobRequest request;
  if (!google::protobuf::TextFormat::ParseFromString(spec_text, request.mutable_spec())) {
    return absl::InvalidArgumentError(absl::StrCat("not a text-format JobSpec:\n", spec_text));
  }
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  SubmitJobResponse response;
  const grpc::Status status = jobs.SubmitJob(&context, request, &response);
  if (!status.ok()) {
    const absl::Status failed = FromGrpcStatus(status);
    return absl::Status(failed.code(), absl::StrCat("submitting the job: ", failed.message()));
  }
  return response.job_id();
}

}  // namespace bench
}  // namespace pstrain
