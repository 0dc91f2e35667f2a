#include "client/job_spec_file.h"

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/status/status_macros.h"

namespace pstrain {

absl::StatusOr<JobSpec> LoadCheckedJobSpec(const std::string& path) {
  ASSIGN_OR_RETURN(JobSpec spec, LoadJobSpecFile(path));
  if (absl::StatusOr<JobSpec> prepared = PrepareJobSpec(spec); !prepared.ok()) {
    return absl::Status(prepared.status().code(),
                        absl::StrCat(path, ": ", prepared.status().message()));
  }
  return spec;
}

}  // namespace pstrain
