#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_EVALUATION_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_EVALUATION_H_

// The evaluation side of a job's Run thread: the evaluation-only modes, and
// the wait for the evaluation of a final checkpoint.

#include <cstdint>

#include "absl/status/status.h"
#include "server/coordinator/job_parts.h"

namespace pstrain {
namespace coordinator {

// JOB_MODE_EVAL: offers the newest checkpoint of model_dir as the one to
// evaluate, and decides the stop (the finishing phase waits for the
// evaluation). JOB_MODE_CONTINUOUS_EVAL: offers every checkpoint that
// appears, until one marked final has been evaluated, the evaluator is
// done, max_seconds, or a stop.
absl::Status EvaluateOnlyJob(JobParts& parts);

// Waits for the evaluator's report on the final checkpoint at `step`.
// DataLoss: it cannot be evaluated. DeadlineExceeded: no report within
// final_eval_timeout. Cancelled: stopped immediately. Aborted: the
// coordinator shuts down.
absl::Status AwaitFinalEvaluation(JobParts& parts, int64_t step);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_EVALUATION_H_
