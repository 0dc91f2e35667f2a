#ifndef PSTRAIN_SERVER_PS_SHARD_SNAPSHOT_H_
#define PSTRAIN_SERVER_PS_SHARD_SNAPSHOT_H_

// A shard's part of a checkpoint: the glue between a ParameterShard and its
// shard file (format, writer and reader in common/checkpoint/shard_file.h),
// which holds every variable with its optimizer slots, the version and the
// exactly-once state.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
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

// A shard's state at a cut, as the bytes of a shard file: what a primary
// sends the backup it rebuilds (docs/design/replicas.md).
struct ShardState {
  std::string bytes;
  uint32_t crc32c = 0;
  int64_t version = 0;
};

// Pauses `shard` at its next sync-round boundary (no later than
// `deadline`), copies its state into memory and from then on writes its
// decisions to `log` (ParameterShard::CutLog), then resumes: the copy plus
// the log's entries are the shard. Updates wait only while the copy is
// made. Unavailable when no round boundary came in time (a round that
// does not close) or the job was dropped: nothing changed.
absl::StatusOr<ShardState> CutShardState(ParameterShard& shard, std::shared_ptr<UpdateLog> log,
                                         absl::Time deadline);

// Replaces the shard's state with `bytes` (from CutShardState, checked
// against `crc32c`) as RestoreShardSnapshot does, with its errors.
absl::Status RestoreShardState(ParameterShard& shard, std::string bytes, uint32_t crc32c);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_SHARD_SNAPSHOT_H_
