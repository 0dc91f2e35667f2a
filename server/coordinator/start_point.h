#ifndef PSTRAIN_SERVER_COORDINATOR_START_POINT_H_
#define PSTRAIN_SERVER_COORDINATOR_START_POINT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"
#include "protos/checkpoint.pb.h"
#include "protos/job.pb.h"

namespace pstrain {
namespace coordinator {

// Where a training job starts from.
struct StartPoint {
  int64_t step = 0;
  std::string checkpoint_dir;  // empty: fresh variables
  CheckpointManifest manifest;
  bool warm_start = false;  // variables only: step 0, data from the start

  // The global step training starts at.
  int64_t global_step() const { return warm_start ? 0 : step; }
  // Whether the data position comes from the checkpoint.
  bool resumes_data() const { return !checkpoint_dir.empty() && !warm_start; }
};

// Where a training job with `spec` starts: the newest restorable checkpoint
// of checkpoint.model_dir, else checkpoint.warm_start_from (variables
// only), else fresh variables. Removes unfinished checkpoints (a crash's
// ckpt-N.tmp) and sets damaged ones aside (SetAsideDamaged): training will
// reach their steps again and must be able to save there. `job_id` names
// the job in the log.
// Errors name the field: checkpoint.model_dir cannot be read, a damaged
// checkpoint cannot be moved, checkpoint.warm_start_from does not verify.
absl::StatusOr<StartPoint> FindStartPoint(Env& env, const JobSpec& spec, absl::string_view job_id);

// OK unless a training job with `spec` would end as soon as it started,
// having nothing left to train: its checkpoint.model_dir's newest
// checkpoint is at or past stop.max_steps (the same job submitted again
// after it finished). FailedPrecondition then, naming the folder, the
// checkpoint and the two ways on: a new folder, or a higher max_steps.
// Lists the folder only; reads no checkpoint.
absl::Status CheckRunNotFinished(Env& env, const JobSpec& spec);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_START_POINT_H_
