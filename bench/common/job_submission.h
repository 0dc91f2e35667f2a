#ifndef PSTRAIN_BENCH_COMMON_JOB_SUBMISSION_H_
#define PSTRAIN_BENCH_COMMON_JOB_SUBMISSION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace bench {

// Submits the text-format JobSpec `spec_text` through `jobs` and returns
// the job id. InvalidArgument: `spec_text` is not a text-format JobSpec
// (the message holds it). Otherwise SubmitJob's own status, as an Abseil
// status; DeadlineExceeded when it had no answer within `timeout`.
absl::StatusOr<std::string> SubmitJobSpec(JobService::StubInterface& jobs,
                                          const std::string& spec_text, absl::Duration timeout);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMMON_JOB_SUBMISSION_H_
