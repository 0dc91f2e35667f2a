#include "common/checkpoint/env.h"

#include <algorithm>
#include <memory>
#include <vector>

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

absl::StatusOr<std::string> ResolveExistingPart(Env& env, const std::string& path) {
  if (path.empty() || path.front() != '/') {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not an absolute path"));
  }
  std::string existing = path;
  std::vector<std::string> below;  // components under `existing`, deepest first
  while (true) {
    absl::StatusOr<std::string> real = env.RealPath(existing);
    if (real.ok()) {
      std::string resolved = *std::move(real);
      for (auto part = below.rbegin(); part != below.rend(); ++part) {
        if (part->empty() || *part == ".") continue;
        resolved = *part == ".." ? Dirname(resolved) : JoinPath(resolved, *part);
      }
      return resolved;
    }
    if (!absl::IsNotFound(real.status())) return real.status();
    // lstat finds the entry, realpath does not: a symlink to nothing.
    ASSIGN_OR_RETURN(const bool entry_exists, PathExists(env, existing));
    if (entry_exists) {
      return absl::InvalidArgumentError(
          absl::StrCat(existing, " is a symlink to nothing; ", path, " would go where it points"));
    }
    const std::string parent = Dirname(existing);
    if (parent == existing) return real.status();
    below.emplace_back(Basename(existing));
    existing = parent;
  }
}

absl::Status ReadFileRange(Env& env, const std::string& path, int64_t offset, std::string* into) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, env.NewSequentialFile(path));
  if (offset > 0) RETURN_IF_ERROR(file->Skip(static_cast<uint64_t>(offset)));
  size_t got = 0;
  while (got < into->size()) {
    char* const scratch = &(*into)[got];
    ASSIGN_OR_RETURN(absl::string_view read, file->Read(into->size() - got, scratch));
    if (read.empty()) {
      return absl::DataLossError(absl::StrCat(path, ": ends at offset ", offset + got,
                                              ", before the ", into->size(), " bytes from offset ",
                                              offset));
    }
    if (read.data() != scratch) std::copy(read.begin(), read.end(), scratch);
    got += read.size();
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> PathExists(Env& env, const std::string& path) {
  absl::StatusOr<FileInfo> info = env.Stat(path);
  if (info.ok()) return true;
  if (absl::IsNotFound(info.status())) return false;
  return info.status();
}

absl::StatusOr<std::string> SetAsideDamaged(Env& env, const std::string& path) {
  for (int attempt = 1; attempt <= 100; ++attempt) {
    std::string target =
        absl::StrCat(path, ".damaged", attempt > 1 ? absl::StrCat("-", attempt) : "");
    ASSIGN_OR_RETURN(const bool taken, PathExists(env, target));
    if (taken) continue;
    if (absl::Status moved = env.Rename(path, target); !moved.ok()) {
      return absl::Status(moved.code(), absl::StrCat("cannot move the damaged ", path, " aside: ",
                                                     moved.message(), "; remove it by hand"));
    }
    return target;
  }
  return absl::AlreadyExistsError(
      absl::StrCat("too many damaged copies of ", path, "; remove them by hand"));
}

}  // namespace pstrain
