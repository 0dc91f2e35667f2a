#ifndef PSTRAIN_SERVER_PS_SHARD_SNAPSHOT_H_
#define PSTRAIN_SERVER_PS_SHARD_SNAPSHOT_H_

// A shard's part of a checkpoint: one file holding every variable with its
// optimizer slots, the version and the exactly-once state.
//
// Layout (little-endian):
//   magic "PSTRSHRD", u32 format version (1)
//   records, each: u32 type, u64 payload length, payload,
//                  u32 masked CRC32C of type, length and payload
//     HEADER    job id, shard index, num shards, version, global step,
//               optimizer name, slots per element, variable count
//     VARIABLE  (one per variable) name, kind, dims, then
//               dense: values and each slot, num_elements floats each;
//               embedding: row count, floats per row, then per row (least
//               recently updated first) its id and value + slots
//     DEDUP     the PushDedup state
//     END       the number of records before it
// The file is written under a temporary name, fsync'd, renamed into place
// and its folder fsync'd, so a reader sees the whole file or none.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/ps/parameter_shard.h"

namespace pstrain {

struct SnapshotInfo {
  int64_t bytes = 0;
  // CRC32C of the whole file (for the checkpoint MANIFEST).
  uint32_t crc32c = 0;
  int64_t version = 0;
};

// Writes `shard` to `path`, pausing its updates meanwhile so that values,
// slots, version and dedup state agree. Missing parent folders are created.
// Internal: the file cannot be written (the message says which call failed).
absl::StatusOr<SnapshotInfo> WriteShardSnapshot(ParameterShard& shard, const std::string& path,
                                                int64_t global_step);

struct RestoreExpectation {
  // From the MANIFEST; 0 skips the check.
  int64_t bytes = 0;
  uint32_t crc32c = 0;
  bool check_crc32c = false;
};

// Reads `path`, verifies every record, and replaces the shard's values,
// slots, version and dedup state with it (all or nothing).
// NotFound: no file at `path`.
// DataLoss: the file is truncated, damaged (the message names the record
//   that fails its checksum) or differs from `expect`.
// FailedPrecondition: the snapshot is of another shard layout (index or
//   count), other variables (names, kinds, shapes) or another optimizer.
absl::StatusOr<SnapshotInfo> RestoreShardSnapshot(ParameterShard& shard, const std::string& path,
                                                  const RestoreExpectation& expect);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_SHARD_SNAPSHOT_H_
