#ifndef PSTRAIN_COMMON_CONFIG_JOB_SPEC_H_
#define PSTRAIN_COMMON_CONFIG_JOB_SPEC_H_

// A JobSpec as the service accepts it. Reading a spec from text is in
// job_spec_parser.h, its defaults in job_spec_defaults.h, its rules in
// job_spec_validation.h; this is the one step that submit takes.

#include "absl/status/statusor.h"
#include "protos/job.pb.h"

namespace pstrain {

// Fills every default of `raw` (FillJobSpecDefaults) and validates the result
// (ValidateJobSpec). Returns the filled spec, which is what the job runs with
// and what JobStatus.spec reports, or InvalidArgument naming every field at
// fault ("optimizer.learning_rate must be > 0, got -1; checkpoint.model_dir is
// required").
absl::StatusOr<JobSpec> PrepareJobSpec(JobSpec raw);

// The same for an optimizer alone (FillOptimizerDefaults,
// ValidateOptimizerSpec): what the update rules and the learning rate are
// built from, wherever the spec came from.
absl::StatusOr<OptimizerSpec> PrepareOptimizerSpec(OptimizerSpec raw);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_JOB_SPEC_H_
