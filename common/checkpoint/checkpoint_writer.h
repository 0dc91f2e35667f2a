#ifndef PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_WRITER_H_
#define PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_WRITER_H_

// Writing a checkpoint (layout in common/checkpoint/checkpoint_layout.h):
//
//   ASSIGN_OR_RETURN(PendingCheckpoint pending, BeginCheckpoint(env, model_dir, step));
//   // each parameter-server shard i of n writes pending.ShardPath(i, n)
//   // (written under a temporary name, fsync'd and renamed by the shard)
//   ASSIGN_OR_RETURN(CheckpointManifest manifest, CommitCheckpoint(env, pending, manifest));
//   // on any failure before the commit: AbandonCheckpoint(env, pending)
//
// A checkpoint exists once, and only once, its folder has been renamed from
// ckpt-<step>.tmp to ckpt-<step> with its MANIFEST inside. A crash at any
// point leaves either no checkpoint at that step (plus a temporary folder
// that CollectAbandonedCheckpoints removes) or the whole checkpoint.
// The functions are thread-safe when the Env is; one checkpoint of a given
// model_dir and step is written at a time.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "protos/checkpoint.pb.h"

namespace pstrain {

// A checkpoint between BeginCheckpoint and its commit or abandonment.
struct PendingCheckpoint {
  std::string model_dir;
  int64_t step = 0;
  std::string temporary_dir;  // model_dir/ckpt-<step>.tmp: where shards write
  std::string final_dir;      // model_dir/ckpt-<step>: what the commit creates

  // temporary_dir/shard-<index>-of-<count>: the file shard `shard_index`
  // writes.
  std::string ShardPath(int shard_index, int num_shards) const;
};

// Creates model_dir (with its parents) when missing and an empty
// model_dir/ckpt-<step>.tmp. A temporary folder of the same step is left
// only by an attempt that failed or crashed, so it is removed first.
// InvalidArgument: a negative step or an empty model_dir.
// AlreadyExists: model_dir/ckpt-<step> exists (complete or not); delete it
//   (DeleteCheckpoint) first if it is to be replaced.
// Other codes: from the Env (see common/checkpoint/env.h).
absl::StatusOr<PendingCheckpoint> BeginCheckpoint(Env& env, const std::string& model_dir,
                                                  int64_t step);

// Moves `pending`, with the files written into it so far, to `step`: a
// checkpoint is named by the step its contents hold, which the shards say
// only once they have written them. Nothing to do when `step` is
// pending.step. On an error `pending` is unchanged.
// InvalidArgument: a negative step.
// AlreadyExists: model_dir/ckpt-<step> exists.
// Other codes: from the Env.
absl::Status RenamePendingCheckpoint(Env& env, PendingCheckpoint& pending, int64_t step);

// Completes `pending`. `manifest` lists the shard files (name and
// shard_index; bytes and crc32c as the shards reported them, or both 0 to
// take them from the files) and carries the job id, data position, spec and
// final flag. CommitCheckpoint fills in format_version, global_step and
// created_unix_ms (Env::Now) when unset, checksums every shard file, writes
// the MANIFEST (fsync'd), renames the folder into place, fsyncs model_dir,
// and then points model_dir/checkpoint at this step. Returns the MANIFEST as
// written.
// On an error before the rename the temporary folder stays for the caller
// to AbandonCheckpoint (or for garbage collection after a crash). Only the
// fsync of model_dir comes after the rename; if it fails, the checkpoint is
// in place but may not survive a power loss.
// InvalidArgument: `manifest` lists no shards, a shard name that is not a
//   plain file name or twice, shard indices other than 0..n-1 each once, or
//   a global_step other than pending.step.
// NotFound: a listed shard file is missing (the message names it).
// DataLoss: a shard file's size or CRC32C differs from what its shard
//   reported (the message names the file, expected and actual values).
// FailedPrecondition: ckpt-<step> appeared meanwhile.
// A failure to update the `checkpoint` pointer is logged, not returned: the
// checkpoint exists, and the pointer is only a hint.
absl::StatusOr<CheckpointManifest> CommitCheckpoint(Env& env, const PendingCheckpoint& pending,
                                                    CheckpointManifest manifest);

// Removes the temporary folder of a checkpoint that will not be committed.
// OK if it is already gone.
absl::Status AbandonCheckpoint(Env& env, const PendingCheckpoint& pending);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_WRITER_H_
