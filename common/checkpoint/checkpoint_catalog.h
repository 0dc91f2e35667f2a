#ifndef PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_CATALOG_H_
#define PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_CATALOG_H_

// The checkpoints of a model_dir: listing, deleting, and collecting what
// crashed writers and deleters left behind. Thread-safe when the Env is.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"

namespace pstrain {

struct CheckpointRef {
  int64_t step = 0;
  std::string path;  // model_dir/ckpt-<step>
};

// The complete checkpoints of `model_dir` (folders ckpt-<step> that hold a
// MANIFEST), oldest first. Temporary and half-deleted folders and folders
// without a MANIFEST are left out. The MANIFESTs and shard files are not
// read: VerifyCheckpoint checks them. A model_dir that does not exist holds
// no checkpoints.
absl::StatusOr<std::vector<CheckpointRef>> ListCheckpoints(Env& env, const std::string& model_dir);

// Like ListCheckpoints, but also lists ckpt-<step> folders without a
// MANIFEST (never completed, or damaged), so that a restore can say why it
// skipped them.
absl::StatusOr<std::vector<CheckpointRef>> ListCheckpointFolders(Env& env,
                                                                 const std::string& model_dir);

// Deletes the checkpoint folder `checkpoint_dir` (model_dir/ckpt-<step>):
// renames it to ckpt-<step>.deleting, so the checkpoint stops existing at
// once, then removes that folder. If model_dir/checkpoint names this step,
// it is pointed at the newest remaining checkpoint, or removed when none
// remains. Holding off deletion of a checkpoint in use (an evaluator's
// lease) is the caller's business.
// InvalidArgument: the folder's name is not ckpt-<step>, so this refuses
//   to delete anything else.
// NotFound: no such folder.
absl::Status DeleteCheckpoint(Env& env, const std::string& checkpoint_dir);

// Removes from `model_dir` what interrupted writers and deleters left:
// ckpt-<step>.tmp and ckpt-<step>.deleting folders and the pointer's
// temporary file. Returns the paths removed. Call it only while no
// checkpoint of this model_dir is being written (when a job starts or
// resumes), since a temporary folder in use looks the same as an abandoned
// one. A model_dir that does not exist has nothing to collect.
absl::StatusOr<std::vector<std::string>> CollectAbandonedCheckpoints(Env& env,
                                                                     const std::string& model_dir);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_CATALOG_H_
