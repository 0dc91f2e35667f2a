#ifndef PSTRAIN_COMMON_CHECKPOINT_WHOLE_FILE_H_
#define PSTRAIN_COMMON_CHECKPOINT_WHOLE_FILE_H_

// Files read, written and checksummed whole: small metadata files (MANIFEST,
// the `checkpoint` pointer) and the checksums of shard files. Thread-safe
// when the Env is.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"

namespace pstrain {

// Replaces `path` with `contents` so that a crash at any moment leaves
// either the old file or the new one, never a mix: writes `<path>.tmp`,
// fsyncs it, renames it over `path` and fsyncs the folder. The folder must
// exist. Two writers of one path at once are not supported (they share the
// temporary name). On failure the temporary file is removed and `path` is
// unchanged.
absl::Status WriteFileAtomically(Env& env, const std::string& path, absl::string_view contents);

// The name WriteFileAtomically writes before renaming; one left behind by a
// crash is garbage.
std::string AtomicWriteTemporaryPath(const std::string& path);

// Returns the contents of `path`. ResourceExhausted (naming the file and the
// cap) when it holds more than `max_bytes`, so a damaged or
// unexpected file cannot exhaust memory. NotFound when there is no file.
absl::StatusOr<std::string> ReadWholeFile(Env& env, const std::string& path, int64_t max_bytes);

struct FileChecksum {
  int64_t bytes = 0;
  uint32_t crc32c = 0;  // unmasked CRC32C of the whole contents
};

// Reads `path` from start to end in bounded memory and returns its size and
// CRC32C.
absl::StatusOr<FileChecksum> ChecksumFile(Env& env, const std::string& path);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_WHOLE_FILE_H_
