#ifndef PSTRAIN_CLIENT_JOB_SPEC_FILE_H_
#define PSTRAIN_CLIENT_JOB_SPEC_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "protos/job.pb.h"

namespace pstrain {

// Reads the job spec at `path` and checks it with the rules the coordinator
// applies, so a bad spec is refused before any process starts or any call
// is made. Returns the spec as written (the coordinator fills defaults).
// InvalidArgument: it does not parse or breaks a rule; the message starts
// with the path and names the field. NotFound, PermissionDenied: the file.
absl::StatusOr<JobSpec> LoadCheckedJobSpec(const std::string& path);

// The same, returning the spec with the defaults filled in, as the
// commands that read a job's data without a coordinator use it.
absl::StatusOr<JobSpec> LoadPreparedJobSpec(const std::string& path);

// --model_dir, shared by the commands that run a job: the folder the job
// keeps its checkpoints and exports in when not empty.
const std::string& ModelDirFlag();
// Sets spec.checkpoint.model_dir to --model_dir when that is given.
void ApplyModelDirFlag(JobSpec& spec);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_JOB_SPEC_FILE_H_
