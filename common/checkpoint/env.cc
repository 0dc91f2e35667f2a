#include "common/checkpoint/env.h"

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/status/status_macros.h"

namespace pstrain {

absl::Status CreateDirs(Env& env, const std::string& dir) {
  absl::StatusOr<FileInfo> info = env.Stat(dir);
  if (info.ok()) {
    if (info->is_directory) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(dir, ": exists and is not a folder"));
  }
  if (!absl::IsNotFound(info.status())) return info.status();
  const std::string parent = Dirname(dir);
  if (parent != dir) RETURN_IF_ERROR(CreateDirs(env, parent));
  absl::Status created = env.CreateDir(dir);
  // Someone else may have created it meanwhile; that is what was wanted.
  if (absl::IsAlreadyExists(created)) return CreateDirs(env, dir);
  return created;
}

absl::Status RemoveTree(Env& env, const std::string& path) {
  ASSIGN_OR_RETURN(const FileInfo info, env.Stat(path));
  if (!info.is_directory || info.is_symlink) return env.RemoveFile(path);
  ASSIGN_OR_RETURN(const std::vector<std::string> names, env.ListDir(path));
  for (const std::string& name : names) {
    absl::Status removed = RemoveTree(env, JoinPath(path, name));
    if (!removed.ok() && !absl::IsNotFound(removed)) return removed;
  }
  return env.RemoveDir(path);
}

absl::StatusOr<bool> PathExists(Env& env, const std::string& path) {
  absl::StatusOr<FileInfo> info = env.Stat(path);
  if (info.ok()) return true;
  if (absl::IsNotFound(info.status())) return false;
  return info.status();
}

}  // namespace pstrain
