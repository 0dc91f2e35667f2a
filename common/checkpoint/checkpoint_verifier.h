#ifndef PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_VERIFIER_H_
#define PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_VERIFIER_H_

// Checking checkpoints before a restore, and choosing the one to restore:
// the newest that verifies, damaged ones skipped with a reason each.
// Thread-safe when the Env is.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "protos/checkpoint.pb.h"

namespace pstrain {

struct VerifyOptions {
  // Read every shard file whole and compare its CRC32C with the MANIFEST.
  // Default true. false checks only that the files exist with the right
  // sizes, much faster for large checkpoints, and leaves the content check
  // to whoever reads the files (a parameter server's restore checks each
  // record itself).
  bool check_contents = true;
};

// Reads checkpoint_dir/MANIFEST and checks every shard file it lists.
// Returns the MANIFEST.
// NotFound: no MANIFEST (never completed), or a listed shard file is
//   missing (the message names it).
// DataLoss: the MANIFEST is damaged (common/checkpoint/manifest.h), or a
//   shard file's size or CRC32C differs from the MANIFEST (the message names
//   the file, expected and actual values), or it is not a regular file.
// FailedPrecondition: a MANIFEST of a newer format.
// Other codes: from the Env, e.g. PermissionDenied.
absl::StatusOr<CheckpointManifest> VerifyCheckpoint(Env& env, const std::string& checkpoint_dir,
                                                    const VerifyOptions& options = {});

// A checkpoint that FindRestorableCheckpoint passed over.
struct SkippedCheckpoint {
  int64_t step = 0;
  std::string path;
  absl::Status reason;  // NotFound or DataLoss, from VerifyCheckpoint
};

struct VerifiedCheckpoint {
  int64_t step = 0;
  std::string path;
  CheckpointManifest manifest;
};

struct RestorableCheckpointSearch {
  // The newest checkpoint that verified; empty when none did (or none
  // exists), and the job starts from scratch.
  std::optional<VerifiedCheckpoint> checkpoint;
  // The newer checkpoint folders that did not verify, newest first. Each is
  // also logged as a warning.
  std::vector<SkippedCheckpoint> skipped;
};

// Verifies the ckpt-<step> folders of `model_dir` from the newest down and
// stops at the first good one. A folder whose verification says the
// checkpoint itself is bad (NotFound, DataLoss) is skipped. Any other error
// (PermissionDenied, a newer format, a failing disk) is returned at once
// instead: falling back past a checkpoint that may well be good would
// silently throw away training.
absl::StatusOr<RestorableCheckpointSearch> FindRestorableCheckpoint(
    Env& env, const std::string& model_dir, const VerifyOptions& options = {});

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_VERIFIER_H_
