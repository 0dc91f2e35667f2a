#ifndef PSTRAIN_SERVER_PS_SHARD_SNAPSHOT_H_
#define PSTRAIN_SERVER_PS_SHARD_SNAPSHOT_H_

// A shard's part of a checkpoint: the glue between a ParameterShard and its
// shard file (format, writer and reader in common/checkpoint/shard_file.h),
// which holds every variable with its optimizer slots, the version and the
// exactly-once state.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/shard_file.h"
#include "server/ps/parameter_shard.h"

namespace pstrain {

struct SnapshotInfo {
  int64_t bytes = 0;
  // CRC32C of the whole file (for the checkpoint MANIFEST).
  uint32_t crc32c = 0;
  int64_t version = 0;
  // The push ledger written (or restored) with the values.
  PushLedger ledger;
};

// Writes `shard` to `path` through `env`, pausing its updates meanwhile so
// that values, slots, version and dedup state agree. Missing parent folders
// are created; the file appears whole or not at all. The Env's errors when
// the file cannot be written (the message says which call failed).
absl::StatusOr<SnapshotInfo> WriteShardSnapshot(Env& env, ParameterShard& shard,
                                                const std::string& path, int64_t global_step);

// Reads `path`, verifies every record, and replaces the shard's values,
// slots, version and dedup state with it (all or nothing).
// NotFound: no file at `path`.
// DataLoss: the file is truncated, damaged (the message names the record
//   that fails its checksum) or differs from `expect` (from the MANIFEST).
// FailedPrecondition: the snapshot is of another shard layout (index or
//   count), other variables (names, kinds, shapes) or another optimizer.
absl::StatusOr<SnapshotInfo> RestoreShardSnapshot(Env& env, ParameterShard& shard,
                                                  const std::string& path,
                                                  const ShardFileExpectation& expect);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_SHARD_SNAPSHOT_H_
