#include "common/config/job_spec.h"

#include <utility>

#include "common/config/job_spec_defaults.h"
#include "common/config/job_spec_validation.h"
#include "common/status/status_macros.h"

namespace pstrain {

absl::StatusOr<JobSpec> PrepareJobSpec(JobSpec raw) {
  FillJobSpecDefaults(&raw);
  RETURN_IF_ERROR(ValidateJobSpec(raw));
  return std::move(raw);
}

absl::StatusOr<OptimizerSpec> PrepareOptimizerSpec(OptimizerSpec raw) {
  FillOptimizerDefaults(&raw);
  RETURN_IF_ERROR(ValidateOptimizerSpec(raw));
  return std::move(raw);
}

}  // namespace pstrain
