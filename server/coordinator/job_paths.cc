#include "server/coordinator/job_paths.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/file_path.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace coordinator {

absl::StatusOr<JobSpec> ConfineJobPaths(Env& env, const std::string& root, JobSpec spec) {
  auto confine = [&](absl::string_view field, std::string* path) -> absl::Status {
    if (path->empty()) return absl::OkStatus();
    if (path->front() != '/') {
      if (root.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, " must be an absolute path, got '", *path, "'"));
      }
      *path = JoinPath(root, *path);
      return absl::OkStatus();
    }
    if (root.empty() || root == "/") return absl::OkStatus();
    if (!IsPathUnder(*path, root)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " '", *path, "' is not under the coordinator's checkpoint root ",
                       root, " (--checkpoint_root), where the parameter servers may write too"));
    }
    // Under the root as written, but a symlink on the way may lead out.
    absl::StatusOr<std::string> real_root = ResolveExistingPart(env, root);
    absl::StatusOr<std::string> real_path = ResolveExistingPart(env, *path);
    if (!real_root.ok() || !real_path.ok()) {
      const absl::Status& failed = real_root.ok() ? real_path.status() : real_root.status();
      return absl::InvalidArgumentError(
          absl::StrCat(field, " '", *path, "': cannot tell where it leads: ", failed.message()));
    }
    if (!IsPathUnder(*real_path, *real_root)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " '", *path, "' leaves the coordinator's checkpoint root ", root,
                       " through a symlink: it leads to ", *real_path));
    }
    return absl::OkStatus();
  };
  CheckpointSpec* checkpoint = spec.mutable_checkpoint();
  RETURN_IF_ERROR(confine("checkpoint.model_dir", checkpoint->mutable_model_dir()));
  RETURN_IF_ERROR(confine("checkpoint.warm_start_from", checkpoint->mutable_warm_start_from()));
  RETURN_IF_ERROR(confine("export.export_dir", spec.mutable_export_()->mutable_export_dir()));
  return spec;
}

}  // namespace coordinator
}  // namespace pstrain
