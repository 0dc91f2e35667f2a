#include "client/job_spec_file.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/status/status_macros.h"

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

}  // namespace pstrain
