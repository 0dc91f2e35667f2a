#include "common/checkpoint/checkpoint_writer.h"

#include <glog/logging.h>

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_pointer.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/whole_file.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

absl::Status CheckShardList(const CheckpointManifest& manifest, const std::string& dir) {
  const int n = manifest.shards_size();
  if (n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint ", dir, ": the manifest lists no shard files"));
  }
  absl::flat_hash_set<std::string> names;
  std::vector<bool> seen(n, false);
  for (const CheckpointShardFile& shard : manifest.shards()) {
    if (!IsPlainFileName(shard.name()) || shard.name() == kManifestFileName) {
      return absl::InvalidArgumentError(absl::StrCat("checkpoint ", dir, ": shard file name \"",
                                                     absl::CHexEscape(shard.name()),
                                                     "\" is not a plain file name"));
    }
    if (!names.insert(shard.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint ", dir, ": shard file ", shard.name(), " is listed twice"));
    }
    const int index = shard.shard_index();
    if (index < 0 || index >= n || seen[index]) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint ", dir, ": shard file ", shard.name(), " has shard index ",
                       index, "; ", n, " files need the indices 0..", n - 1, " once each"));
    }
    seen[index] = true;
  }
  return absl::OkStatus();
}

// Fills in the size and CRC32C of `shard` from its file, or checks them
// against the file when the shard reported them.
absl::Status ChecksumShardFile(Env& env, const std::string& dir, CheckpointShardFile& shard) {
  const std::string path = JoinPath(dir, shard.name());
  absl::StatusOr<FileChecksum> sum = ChecksumFile(env, path);
  if (absl::IsNotFound(sum.status())) {
    return absl::NotFoundError(
        absl::StrCat(path, ": missing; shard ", shard.shard_index(), " did not write its file"));
  }
  if (!sum.ok()) return sum.status();
  const bool reported = shard.bytes() != 0 || shard.crc32c() != 0;
  if (reported && sum->bytes != shard.bytes()) {
    return absl::DataLossError(absl::StrCat(path, ": ", sum->bytes, " bytes, but shard ",
                                            shard.shard_index(), " reported ", shard.bytes()));
  }
  if (reported && sum->crc32c != shard.crc32c()) {
    return absl::DataLossError(absl::StrFormat("%s: crc32c 0x%08x, but shard %d reported 0x%08x",
                                               path, sum->crc32c, shard.shard_index(),
                                               shard.crc32c()));
  }
  shard.set_bytes(sum->bytes);
  shard.set_crc32c(sum->crc32c);
  return absl::OkStatus();
}

// Files in the folder that the manifest does not list are kept (they go
// when the checkpoint is deleted) but are worth a line in the log: they
// usually mean a shard wrote to the wrong name.
void LogUnlistedFiles(Env& env, const std::string& dir, const CheckpointManifest& manifest) {
  absl::StatusOr<std::vector<std::string>> names = env.ListDir(dir);
  if (!names.ok()) return;
  absl::flat_hash_set<std::string> listed;
  for (const CheckpointShardFile& shard : manifest.shards()) listed.insert(shard.name());
  for (const std::string& name : *names) {
    if (!listed.contains(name) && name != kManifestFileName) {
      LOG(WARNING) << "Checkpoint " << dir << " holds " << name
                   << ", which its MANIFEST does not list";
    }
  }
}

// `pending` named for `step`, its folders checked: the checkpoint of the
// step must not exist, and a temporary folder left by an earlier attempt
// at the step is removed.
absl::StatusOr<PendingCheckpoint> ClearWayFor(Env& env, const std::string& model_dir,
                                              int64_t step) {
  if (step < 0) {
    return absl::InvalidArgumentError(absl::StrCat("negative checkpoint step ", step));
  }
  PendingCheckpoint pending;
  pending.model_dir = model_dir;
  pending.step = step;
  pending.temporary_dir = TemporaryCheckpointDir(model_dir, step);
  pending.final_dir = CheckpointDir(model_dir, step);
  ASSIGN_OR_RETURN(const bool final_exists, PathExists(env, pending.final_dir));
  if (final_exists) {
    return absl::AlreadyExistsError(
        absl::StrCat(pending.final_dir, ": a checkpoint of step ", step, " already exists"));
  }
  absl::Status removed = RemoveTree(env, pending.temporary_dir);
  if (removed.ok()) {
    LOG(WARNING) << "Removed " << pending.temporary_dir
                 << ", left by an earlier attempt to checkpoint step " << step;
  } else if (!absl::IsNotFound(removed)) {
    return removed;
  }
  return pending;
}

}  // namespace

std::string PendingCheckpoint::ShardPath(int shard_index, int num_shards) const {
  return JoinPath(temporary_dir, ShardFileName(shard_index, num_shards));
}

absl::StatusOr<PendingCheckpoint> BeginCheckpoint(Env& env, const std::string& model_dir,
                                                  int64_t step) {
  if (model_dir.empty()) return absl::InvalidArgumentError("empty model_dir");
  if (step < 0) {
    return absl::InvalidArgumentError(absl::StrCat("negative checkpoint step ", step));
  }
  // Before anything is created.
  RETURN_IF_ERROR(CreateDirs(env, model_dir));
  ASSIGN_OR_RETURN(PendingCheckpoint pending, ClearWayFor(env, model_dir, step));
  RETURN_IF_ERROR(env.CreateDir(pending.temporary_dir));
  return pending;
}

absl::Status RenamePendingCheckpoint(Env& env, PendingCheckpoint& pending, int64_t step) {
  if (step == pending.step) return absl::OkStatus();
  ASSIGN_OR_RETURN(PendingCheckpoint renamed, ClearWayFor(env, pending.model_dir, step));
  RETURN_IF_ERROR(env.Rename(pending.temporary_dir, renamed.temporary_dir));
  pending = std::move(renamed);
  return absl::OkStatus();
}

absl::StatusOr<CheckpointManifest> CommitCheckpoint(Env& env, const PendingCheckpoint& pending,
                                                    CheckpointManifest manifest) {
  if (manifest.global_step() != 0 && manifest.global_step() != pending.step) {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint ", pending.final_dir, ": the manifest's global step ", manifest.global_step(),
        " is not the step ", pending.step, " it was begun with"));
  }
  RETURN_IF_ERROR(CheckShardList(manifest, pending.final_dir));
  manifest.set_global_step(pending.step);
  if (manifest.format_version() == 0) manifest.set_format_version(kManifestFormatVersion);
  if (manifest.created_unix_ms() == 0) {
    manifest.set_created_unix_ms(absl::ToUnixMillis(env.Now()));
  }
  for (CheckpointShardFile& shard : *manifest.mutable_shards()) {
    RETURN_IF_ERROR(ChecksumShardFile(env, pending.temporary_dir, shard));
  }
  LogUnlistedFiles(env, pending.temporary_dir, manifest);

  // WriteManifest fsyncs the folder as well, which also makes the shard
  // files' names durable before the rename publishes them.
  RETURN_IF_ERROR(WriteManifest(env, pending.temporary_dir, manifest));
  absl::Status renamed = env.Rename(pending.temporary_dir, pending.final_dir);
  if (absl::IsFailedPrecondition(renamed) || absl::IsAlreadyExists(renamed)) {
    return absl::FailedPreconditionError(absl::StrCat(
        pending.final_dir, ": appeared while the checkpoint was written: ", renamed.message()));
  }
  RETURN_IF_ERROR(renamed);
  RETURN_IF_ERROR(env.SyncDir(pending.model_dir));

  absl::Status pointed = WriteCheckpointPointer(env, pending.model_dir, pending.step);
  if (!pointed.ok()) {
    LOG(WARNING) << "Checkpoint " << pending.final_dir
                 << " is complete, but the checkpoint pointer was not updated: " << pointed;
  }
  return manifest;
}

absl::Status AbandonCheckpoint(Env& env, const PendingCheckpoint& pending) {
  absl::Status removed = RemoveTree(env, pending.temporary_dir);
  if (absl::IsNotFound(removed)) return absl::OkStatus();
  return removed;
}

}  // namespace pstrain
