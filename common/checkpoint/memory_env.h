#ifndef PSTRAIN_COMMON_CHECKPOINT_MEMORY_ENV_H_
#define PSTRAIN_COMMON_CHECKPOINT_MEMORY_ENV_H_

// An Env whose files live in memory: for a file that is sent rather than
// stored, such as the shard file a primary hands to a backup it rebuilds
// (docs/design/replicas.md), written and read by the same code as a
// checkpoint's. Paths are absolute; "/" exists from the start. Symbolic
// links do not exist here, so RealPath is the path itself.

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "common/checkpoint/env.h"

namespace pstrain {

// Thread-safe. A file's bytes are shared by its open handles, as on a
// filesystem: a writer's Append is seen by a Read that comes after it.
class MemoryEnv final : public Env {
 public:
  MemoryEnv() = default;
  MemoryEnv(const MemoryEnv&) = delete;
  MemoryEnv& operator=(const MemoryEnv&) = delete;

  // The bytes of the file at `path`; NotFound when there is none.
  absl::StatusOr<std::string> Contents(const std::string& path) const;
  // Creates (or replaces) the file at `path` with `bytes`; its folder must
  // exist.
  absl::Status Put(const std::string& path, std::string bytes);

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override;
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
  absl::Time Now() override { return absl::Now(); }

  // A file's bytes, shared with the handles open on it.
  struct Data {
    absl::Mutex mu;
    std::string bytes ABSL_GUARDED_BY(mu);
  };

 private:
  absl::StatusOr<std::shared_ptr<Data>> OpenFile(const std::string& path, bool create,
                                                 bool truncate);
  // NotFound unless the folder above `path` exists.
  absl::Status CheckParentLocked(const std::string& path) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Data>> files_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> dirs_ ABSL_GUARDED_BY(mu_) = {"/"};
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_MEMORY_ENV_H_
