#include "common/checkpoint/whole_file.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/checksum/crc32c.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr size_t kReadChunkBytes = 1 << 20;
constexpr size_t kFirstReadChunkBytes = 4096;

absl::Status WriteAndSync(Env& env, const std::string& path, absl::string_view contents) {
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, env.NewWritableFile(path));
  RETURN_IF_ERROR(file->Append(contents));
  RETURN_IF_ERROR(file->Sync());
  return file->Close();
}

}  // namespace

std::string AtomicWriteTemporaryPath(const std::string& path) { return absl::StrCat(path, ".tmp"); }

absl::Status WriteFileAtomically(Env& env, const std::string& path, absl::string_view contents) {
  const std::string temporary = AtomicWriteTemporaryPath(path);
  absl::Status status = WriteAndSync(env, temporary, contents);
  if (status.ok()) status = env.Rename(temporary, path);
  if (!status.ok()) {
    // Best effort: the temporary may not exist, and the error that matters
    // is the one above.
    (void)env.RemoveFile(temporary);
    return status;
  }
  // Without this the rename itself may be lost in a crash, leaving the old
  // file (or none) although the caller was told the write succeeded.
  return env.SyncDir(Dirname(path));
}

absl::StatusOr<std::string> ReadWholeFile(Env& env, const std::string& path, int64_t max_bytes) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, env.NewSequentialFile(path));
  // Read straight into `contents`, a chunk at a time, the chunk doubling up
  // to kReadChunkBytes: most files read whole are a few bytes (a pointer, a
  // MANIFEST), and a 1 MiB buffer for each made reading them cost more than
  // parsing them.
  std::string contents;
  size_t chunk = kFirstReadChunkBytes;
  for (;;) {
    const size_t at = contents.size();
    contents.resize(at + chunk);
    ASSIGN_OR_RETURN(absl::string_view piece, file->Read(chunk, &contents[at]));
    if (piece.data() != &contents[at]) std::memmove(&contents[at], piece.data(), piece.size());
    contents.resize(at + piece.size());
    if (piece.empty()) break;
    // Checked as the file is read, not from its size beforehand, so a file
    // that grows meanwhile cannot get past the cap.
    if (static_cast<int64_t>(contents.size()) > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": more than ", max_bytes, " bytes, the most this file may hold"));
    }
    chunk = std::min(2 * chunk, kReadChunkBytes);
  }
  return contents;
}

absl::StatusOr<FileChecksum> ChecksumFile(Env& env, const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, env.NewSequentialFile(path));
  std::vector<char> scratch(kReadChunkBytes);
  FileChecksum sum;
  for (;;) {
    ASSIGN_OR_RETURN(absl::string_view piece, file->Read(scratch.size(), scratch.data()));
    if (piece.empty()) break;
    sum.crc32c = Crc32cExtend(sum.crc32c, piece.data(), piece.size());
    sum.bytes += static_cast<int64_t>(piece.size());
  }
  return sum;
}

}  // namespace pstrain
