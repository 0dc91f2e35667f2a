#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_PATHS_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_PATHS_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "protos/job.pb.h"

namespace pstrain {
namespace coordinator {

// The spec with its model_dir, warm_start_from and export_dir made
// absolute under `root` (the coordinator's --checkpoint_root: relative ones
// are taken from it), each checked to stay there, also once the symlinks of
// its existing part are followed (ResolveExistingPart). With `root` empty,
// paths are left as they are and relative ones are refused.
// InvalidArgument: a path outside the root, or one that leaves it through
//   a symlink (the message names the field).
absl::StatusOr<JobSpec> ConfineJobPaths(Env& env, const std::string& root, JobSpec spec);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_PATHS_H_
