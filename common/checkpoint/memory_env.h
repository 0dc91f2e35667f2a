#ifndef PSTRAIN_COMMON_CHECKPOINT_MEMORY_ENV_H_
#define PSTRAIN_COMMON_CHECKPOINT_MEMORY_ENV_H_

// An Env whose files live in memory: for files that are sent rather than
// stored (the state a primary hands to a backup it rebuilds,
// docs/design/replicas.md), written and read by the same code as a
// checkpoint's; and for fuzz targets, which read and write checkpoint
// files thousands of times a second without touching the disk and without
// one input's files leaking into the next. Only "/" exists at first. Paths are absolute; "." and ".." are resolved lexically
// and there are no symbolic links. Writes reach the file at once (Flush and
// Sync have nothing left to do). Thread-safe.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/checkpoint/env.h"

namespace pstrain {

class MemoryEnv final : public Env {
 public:
  MemoryEnv();

  // Creates `path` and its missing folders with `contents` (ignores
  // errors by design, since a fuzz input may name anything).
  void PutFile(const std::string& path, std::string contents);
  // The contents of the file at `path`. NotFound: no such file.
  absl::StatusOr<std::string> Contents(const std::string& path) const;

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& path) override;
  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override;
  absl::StatusOr<FileInfo> Stat(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override;
  absl::Status CreateDir(const std::string& dir) override;
  absl::Status RemoveFile(const std::string& path) override;
  absl::Status RemoveDir(const std::string& dir) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status TruncateFile(const std::string& path, int64_t size) override;
  absl::Status SyncDir(const std::string& dir) override;
  absl::StatusOr<std::string> RealPath(const std::string& path) override;
  absl::Time Now() override;

  // Appends to an existing file (what MemoryEnv's WritableFile calls).
  absl::Status AppendTo(const std::string& path, absl::string_view data);

 private:
  // `path` made absolute and lexically normal, or InvalidArgument.
  static absl::StatusOr<std::string> Normalize(const std::string& path);
  bool ParentExistsLocked(const std::string& path) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path,
                                                             bool truncate);

  mutable absl::Mutex mu_;
  std::map<std::string, std::string> files_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> dirs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_MEMORY_ENV_H_
