#include "client/job_spec_file.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/status/status_macros.h"
#include "gflags/gflags.h"

DEFINE_string(model_dir, "",
              "submit, validate, local, train-local: the folder the job keeps its checkpoints "
              "and exports in, in place of the spec's checkpoint.model_dir; a new folder trains "
              "from scratch where the spec's already holds a finished run. train-local keeps "
              "nothing without it, and the folder must hold no checkpoint yet");

namespace pstrain {

namespace {

// `spec`, read from `path`, with its defaults; errors start with the path.
absl::StatusOr<JobSpec> Prepared(const std::string& path, JobSpec spec) {
  absl::StatusOr<JobSpec> prepared = PrepareJobSpec(std::move(spec));
  if (!prepared.ok()) {
    return absl::Status(prepared.status().code(),
                        absl::StrCat(path, ": ", prepared.status().message()));
  }
  return prepared;
}

}  // namespace

absl::StatusOr<JobSpec> LoadCheckedJobSpec(const std::string& path) {
  ASSIGN_OR_RETURN(JobSpec spec, LoadJobSpecFile(path));
  RETURN_IF_ERROR(Prepared(path, spec).status());
  return spec;
}

absl::StatusOr<JobSpec> LoadPreparedJobSpec(const std::string& path) {
  ASSIGN_OR_RETURN(JobSpec spec, LoadJobSpecFile(path));
  return Prepared(path, std::move(spec));
}

const std::string& ModelDirFlag() { return FLAGS_model_dir; }

void ApplyModelDirFlag(JobSpec& spec) {
  if (!FLAGS_model_dir.empty()) spec.mutable_checkpoint()->set_model_dir(FLAGS_model_dir);
}

}  // namespace pstrain
