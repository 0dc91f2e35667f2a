#ifndef PSTRAIN_COMMON_CHECKPOINT_MANIFEST_H_
#define PSTRAIN_COMMON_CHECKPOINT_MANIFEST_H_

// The MANIFEST file of a checkpoint folder: a binary CheckpointManifest
// (protos/checkpoint.proto) whose last field, manifest_crc32c, is the masked
// CRC32C of all the bytes before it. Thread-safe.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"
#include "protos/checkpoint.pb.h"
#include "protos/job.pb.h"

namespace pstrain {

inline constexpr int32_t kManifestFormatVersion = 1;

// A MANIFEST holds a job spec and data ranges, not tensors; anything larger
// is damaged.
inline constexpr int64_t kMaxManifestBytes = 64 << 20;

// The file's bytes: `manifest` (whatever its manifest_crc32c) followed by
// its checksum field.
std::string SerializeManifest(const CheckpointManifest& manifest);

// Parses and checks a MANIFEST's bytes; `file` names it in messages.
// DataLoss: the checksum is missing or does not match, the bytes do not
// parse, or the content is impossible (a negative step or size, sizes that
// total more than int64 holds, a shard file name that is not a plain file
// name or appears twice).
// FailedPrecondition: written in a newer format than kManifestFormatVersion.
absl::StatusOr<CheckpointManifest> ParseManifest(absl::string_view bytes, absl::string_view file);

// Writes checkpoint_dir/MANIFEST atomically (common/checkpoint/whole_file.h).
absl::Status WriteManifest(Env& env, const std::string& checkpoint_dir,
                           const CheckpointManifest& manifest);

// Reads and checks checkpoint_dir/MANIFEST without looking at the shard
// files (VerifyCheckpoint does that).
// NotFound: no MANIFEST (the checkpoint was never completed).
// DataLoss: as ParseManifest, or a MANIFEST larger than kMaxManifestBytes,
//   or one whose global_step is not the step in the folder's name.
// FailedPrecondition: as ParseManifest.
absl::StatusOr<CheckpointManifest> ReadManifest(Env& env, const std::string& checkpoint_dir);

// The summary of a checkpoint the coordinator reports (bytes: all shard
// files together).
CheckpointInfo CheckpointInfoFromManifest(const std::string& checkpoint_dir,
                                          const CheckpointManifest& manifest);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_MANIFEST_H_
