#ifndef PSTRAIN_COMMON_CONFIG_JOB_SPEC_VALIDATION_H_
#define PSTRAIN_COMMON_CONFIG_JOB_SPEC_VALIDATION_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "protos/job.pb.h"

namespace pstrain {

// Checks every field of `spec`, which FillJobSpecDefaults has filled: a field
// whose zero value is not legal (train_data.batch_size 0) is refused here, so
// an unfilled spec fails wherever it relied on a default.
//
// Returns OK, or InvalidArgument listing every problem found, in field order,
// joined by "; ", so that a user can fix a spec in one pass. Each problem
// names the field path, the rule and the value:
//   "optimizer.learning_rate must be > 0, got -1"
//   "model.mlp.hidden_units[1] must be > 0, got -5"
//   "eval.best_metric \"f1\" must be one of eval.metrics [loss, accuracy]"
//   "training.replicas_to_aggregate is only valid with update_mode SYNC, ..."
// Rules that span fields (a training job needs a stop condition; data
// required by the mode; the data a model kind can read) name every field
// involved. Enum values this build does not know are refused.
absl::Status ValidateJobSpec(const JobSpec& spec);

// The rules of one part of a spec, for the code that builds it from a spec
// nobody may have validated (a parameter server's CreateVariables, a
// library caller): the same rules and messages as ValidateJobSpec, on a
// part FillJobSpecDefaults' Fill*Defaults has filled. OK or
// InvalidArgument listing every problem.
absl::Status ValidateModelSpec(const ModelSpec& model);
// `path` names the data in messages: "train_data", "eval_data".
absl::Status ValidateDataSpec(absl::string_view path, const DataSpec& data);
absl::Status ValidateOptimizerSpec(const OptimizerSpec& optimizer);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_JOB_SPEC_VALIDATION_H_
