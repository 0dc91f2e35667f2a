#include "common/checkpoint/checkpoint_catalog.h"

#include <glog/logging.h>

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_pointer.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/whole_file.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// The entries of model_dir; none when it does not exist.
absl::StatusOr<std::vector<std::string>> ListModelDir(Env& env, const std::string& model_dir) {
  absl::StatusOr<std::vector<std::string>> names = env.ListDir(model_dir);
  if (absl::IsNotFound(names.status())) return std::vector<std::string>();
  return names;
}

// Which checkpoint folders a listing names.
enum class Folders {
  kComplete,  // those with a MANIFEST
  kAll,       // also those still being written, or left unfinished
};

absl::StatusOr<std::vector<CheckpointRef>> ListFolders(Env& env, const std::string& model_dir,
                                                       Folders folders) {
  ASSIGN_OR_RETURN(const std::vector<std::string> names, ListModelDir(env, model_dir));
  std::vector<CheckpointRef> refs;
  for (const std::string& name : names) {
    const CheckpointEntry entry = ClassifyModelDirEntry(name);
    if (entry.kind != CheckpointEntryKind::kCheckpoint) continue;
    CheckpointRef ref{entry.step, JoinPath(model_dir, name)};
    absl::StatusOr<FileInfo> info = env.Stat(ref.path);
    // Gone since the listing (deleted meanwhile): not a checkpoint.
    if (absl::IsNotFound(info.status())) continue;
    RETURN_IF_ERROR(info.status());
    if (!info->is_directory) continue;
    if (folders == Folders::kComplete) {
      ASSIGN_OR_RETURN(const bool has_manifest,
                       PathExists(env, JoinPath(ref.path, kManifestFileName)));
      if (!has_manifest) continue;
    }
    refs.push_back(std::move(ref));
  }
  std::sort(refs.begin(), refs.end(),
            [](const CheckpointRef& a, const CheckpointRef& b) { return a.step < b.step; });
  return refs;
}

// Re-points model_dir/checkpoint after `deleted_step` went, if it named it.
absl::Status RepointAfterDelete(Env& env, const std::string& model_dir, int64_t deleted_step) {
  absl::StatusOr<int64_t> pointed = ReadCheckpointPointer(env, model_dir);
  if (absl::IsNotFound(pointed.status())) return absl::OkStatus();
  // A damaged pointer is replaced like a stale one.
  if (pointed.ok() && *pointed != deleted_step) return absl::OkStatus();
  ASSIGN_OR_RETURN(const std::vector<CheckpointRef> remaining, ListCheckpoints(env, model_dir));
  if (remaining.empty()) return RemoveCheckpointPointer(env, model_dir);
  return WriteCheckpointPointer(env, model_dir, remaining.back().step);
}

}  // namespace

absl::StatusOr<std::vector<CheckpointRef>> ListCheckpoints(Env& env, const std::string& model_dir) {
  return ListFolders(env, model_dir, Folders::kComplete);
}

absl::StatusOr<std::vector<CheckpointRef>> ListCheckpointFolders(Env& env,
                                                                 const std::string& model_dir) {
  return ListFolders(env, model_dir, Folders::kAll);
}

absl::Status DeleteCheckpoint(Env& env, const std::string& checkpoint_dir) {
  const std::optional<int64_t> step = ParseCheckpointDirName(Basename(checkpoint_dir));
  if (!step.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(checkpoint_dir, ": not a checkpoint folder (ckpt-<step>); not deleting it"));
  }
  ASSIGN_OR_RETURN(const FileInfo info, env.Stat(checkpoint_dir));
  if (!info.is_directory || info.is_symlink) {
    return absl::InvalidArgumentError(
        absl::StrCat(checkpoint_dir, ": not a checkpoint folder; not deleting it"));
  }
  const std::string model_dir = Dirname(checkpoint_dir);
  const std::string deleting = DeletingCheckpointDir(model_dir, *step);
  // Left by an earlier deletion of the same step that crashed.
  absl::Status stale = RemoveTree(env, deleting);
  if (!stale.ok() && !absl::IsNotFound(stale)) return stale;
  RETURN_IF_ERROR(env.Rename(checkpoint_dir, deleting));
  // Once this is durable, a crash can no longer bring back a half-deleted
  // checkpoint under its real name.
  RETURN_IF_ERROR(env.SyncDir(model_dir));
  RETURN_IF_ERROR(RemoveTree(env, deleting));
  return RepointAfterDelete(env, model_dir, *step);
}

absl::StatusOr<std::vector<std::string>> CollectAbandonedCheckpoints(Env& env,
                                                                     const std::string& model_dir) {
  ASSIGN_OR_RETURN(const std::vector<std::string> names, ListModelDir(env, model_dir));
  const std::string pointer_temporary =
      AtomicWriteTemporaryPath(std::string(kCheckpointPointerFileName));
  std::vector<std::string> removed;
  for (const std::string& name : names) {
    const CheckpointEntryKind kind = ClassifyModelDirEntry(name).kind;
    if (kind != CheckpointEntryKind::kTemporary && kind != CheckpointEntryKind::kDeleting &&
        name != pointer_temporary) {
      continue;
    }
    const std::string path = JoinPath(model_dir, name);
    absl::Status status = RemoveTree(env, path);
    if (absl::IsNotFound(status)) continue;
    RETURN_IF_ERROR(status);
    LOG(INFO) << "Removed " << path << ", left by an interrupted checkpoint write or deletion";
    removed.push_back(path);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

}  // namespace pstrain
