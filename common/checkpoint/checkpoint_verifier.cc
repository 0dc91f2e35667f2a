#include "common/checkpoint/checkpoint_verifier.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/whole_file.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

std::string SizeMismatch(const std::string& path, int64_t actual, int64_t expected) {
  return absl::StrCat(path, ": ", actual, " bytes, but the MANIFEST says ", expected,
                      actual < expected ? " (truncated)" : " (longer than written)");
}

absl::Status VerifyShardFile(Env& env, const std::string& checkpoint_dir,
                             const CheckpointShardFile& shard, const VerifyOptions& options) {
  const std::string path = JoinPath(checkpoint_dir, shard.name());
  absl::StatusOr<FileInfo> info = env.Stat(path);
  if (absl::IsNotFound(info.status())) {
    return absl::NotFoundError(
        absl::StrCat(path, ": missing; the MANIFEST lists it with ", shard.bytes(), " bytes"));
  }
  RETURN_IF_ERROR(info.status());
  if (info->is_directory) {
    return absl::DataLossError(absl::StrCat(path, ": a folder, but the MANIFEST lists a file"));
  }
  if (info->size != shard.bytes()) {
    return absl::DataLossError(SizeMismatch(path, info->size, shard.bytes()));
  }
  if (!options.check_contents) return absl::OkStatus();
  ASSIGN_OR_RETURN(const FileChecksum sum, ChecksumFile(env, path));
  if (sum.bytes != shard.bytes()) {
    return absl::DataLossError(SizeMismatch(path, sum.bytes, shard.bytes()));
  }
  if (sum.crc32c != shard.crc32c()) {
    return absl::DataLossError(
        absl::StrFormat("%s: crc32c 0x%08x, but the MANIFEST says 0x%08x (the file is damaged)",
                        path, sum.crc32c, shard.crc32c()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CheckpointManifest> VerifyCheckpoint(Env& env, const std::string& checkpoint_dir,
                                                    const VerifyOptions& options) {
  ASSIGN_OR_RETURN(CheckpointManifest manifest, ReadManifest(env, checkpoint_dir));
  for (const CheckpointShardFile& shard : manifest.shards()) {
    RETURN_IF_ERROR(VerifyShardFile(env, checkpoint_dir, shard, options));
  }
  return manifest;
}

absl::StatusOr<RestorableCheckpointSearch> FindRestorableCheckpoint(Env& env,
                                                                    const std::string& model_dir,
                                                                    const VerifyOptions& options) {
  ASSIGN_OR_RETURN(std::vector<CheckpointRef> folders, ListCheckpointFolders(env, model_dir));
  std::reverse(folders.begin(), folders.end());
  RestorableCheckpointSearch search;
  for (CheckpointRef& folder : folders) {
    absl::StatusOr<CheckpointManifest> manifest = VerifyCheckpoint(env, folder.path, options);
    if (manifest.ok()) {
      search.checkpoint =
          VerifiedCheckpoint{folder.step, std::move(folder.path), *std::move(manifest)};
      return search;
    }
    const absl::Status& reason = manifest.status();
    if (!absl::IsNotFound(reason) && !absl::IsDataLoss(reason)) return reason;
    LOG(WARNING) << "Skipping checkpoint " << folder.path << ": " << reason.message();
    search.skipped.push_back(SkippedCheckpoint{folder.step, std::move(folder.path), reason});
  }
  return search;
}

}  // namespace pstrain
