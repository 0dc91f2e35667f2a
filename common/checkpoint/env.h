#ifndef PSTRAIN_COMMON_CHECKPOINT_ENV_H_
#define PSTRAIN_COMMON_CHECKPOINT_ENV_H_

// The filesystem and clock that checkpoint and summary files are written
// through, after leveldb's Env: production code uses PosixEnv
// (common/checkpoint/posix_env.h); tests wrap it to fake time or to fail a
// chosen operation, which is how a crash in the middle of a commit is
// simulated.
//
// Every error names the path and says what failed. Codes: NotFound (no such
// file or folder), AlreadyExists, PermissionDenied, ResourceExhausted (disk
// or quota full), FailedPrecondition (a file where a folder was expected, a
// folder that is not empty, ...), DataLoss (the device reported an I/O
// error), Internal (anything else).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace pstrain {

// A file open for writing. Writes are buffered; nothing reaches the file
// until Flush, Sync or Close, or until the buffer fills. One Append reaches
// the file in one write call, so lines appended whole by one process are
// never interleaved with another appender's. Not thread-safe.
class WritableFile {
 public:
  virtual ~WritableFile() = default;

  virtual absl::Status Append(absl::string_view data) = 0;
  // Hands buffered data to the operating system: other readers see it, a
  // power loss may still lose it.
  virtual absl::Status Flush() = 0;
  // Flushes, then forces the data to the device (fsync).
  virtual absl::Status Sync() = 0;
  // Flushes and closes; does not sync. Later calls fail with
  // FailedPrecondition. The destructor closes a file left open and drops
  // any error, so call Close to see it.
  virtual absl::Status Close() = 0;
};

// A file open for reading from the start. Not thread-safe.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;

  // Reads up to n bytes into scratch (at least n long) and returns them; an
  // empty result means end of file. Fewer than n bytes does not by itself
  // mean end of file.
  virtual absl::StatusOr<absl::string_view> Read(size_t n, char* scratch) = 0;
  // Moves n bytes ahead without reading them; past the end, later Reads
  // find the end of file.
  virtual absl::Status Skip(uint64_t n) = 0;
};

// What Stat finds at a path. A symbolic link is described by its target,
// with is_symlink set (a dangling link is neither a folder nor sized).
struct FileInfo {
  bool is_directory = false;
  bool is_symlink = false;
  int64_t size = 0;  // bytes, for regular files
  // The last change of a regular file's contents; 0 where the Env does not
  // keep it.
  int64_t modified_unix_ns = 0;
};

// Implementations are thread-safe.
class Env {
 public:
  virtual ~Env() = default;

  // Creates `path`, or truncates it if it exists.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) = 0;
  // Opens `path` for appending, creating it if it does not exist.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& path) = 0;
  virtual absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) = 0;

  // NotFound when nothing is at `path`.
  virtual absl::StatusOr<FileInfo> Stat(const std::string& path) = 0;
  // The names (not paths) of the entries of `dir`, without "." and "..",
  // in no particular order.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  // Creates one folder; its parent must exist. AlreadyExists if `dir` does.
  virtual absl::Status CreateDir(const std::string& dir) = 0;
  virtual absl::Status RemoveFile(const std::string& path) = 0;
  // Removes an empty folder.
  virtual absl::Status RemoveDir(const std::string& dir) = 0;
  // Atomically replaces `to` (a file, or an empty folder when `from` is a
  // folder) with `from`.
  virtual absl::Status Rename(const std::string& from, const std::string& to) = 0;
  virtual absl::Status TruncateFile(const std::string& path, int64_t size) = 0;
  // Makes the entries of `dir` (creations, renames, removals) durable.
  virtual absl::Status SyncDir(const std::string& dir) = 0;
  // The absolute path of `path` with every symlink, "." and ".." resolved,
  // as realpath(3). NotFound when `path` does not exist, or a symlink on the
  // way points at nothing.
  virtual absl::StatusOr<std::string> RealPath(const std::string& path) = 0;

  virtual absl::Time Now() = 0;
};

// Creates `dir` and any missing parents; OK if it already exists as a
// folder. FailedPrecondition if a component is a file.
absl::Status CreateDirs(Env& env, const std::string& dir);

// Removes `path` and, if it is a folder, everything under it. NotFound if
// nothing is at `path`. Symbolic links are removed, never followed.
absl::Status RemoveTree(Env& env, const std::string& path);

// Where `path` (absolute) leads once the symlinks of its existing part are
// followed: the RealPath of its deepest existing ancestor, then the
// components below it as written ("." dropped, ".." taken lexically, which
// is right since nothing below an existing ancestor exists to be a link).
// This is where a folder created at `path` would end up, so confinement
// under a root compares it, not the path as written.
// InvalidArgument: `path` is not absolute, or an entry on the way is a
//   symlink to nothing (creating below it would follow it wherever it comes
//   to point).
// Other codes: from the Env.
absl::StatusOr<std::string> ResolveExistingPart(Env& env, const std::string& path);

// Reads bytes [offset, offset + into->size()) of `path` into *into.
// DataLoss naming the file and offsets: the file ends first. Other codes:
// from the Env.
absl::Status ReadFileRange(Env& env, const std::string& path, int64_t offset, std::string* into);

// Whether something is at `path`. Errors other than NotFound are returned.
absl::StatusOr<bool> PathExists(Env& env, const std::string& path);

// Renames a damaged file or folder to <path>.damaged (or .damaged-<n>, the
// first free of 2..100), out of the way of what is written at `path` next
// but kept for a person to look at. Returns where it went.
// AlreadyExists: 100 damaged copies are there already. Other codes: the
// rename's, with "remove it by hand".
absl::StatusOr<std::string> SetAsideDamaged(Env& env, const std::string& path);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_ENV_H_
