#ifndef PSTRAIN_COMMON_CHECKPOINT_POSIX_ENV_H_
#define PSTRAIN_COMMON_CHECKPOINT_POSIX_ENV_H_

// The Env of the local filesystem (POSIX calls) and the system clock.

#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint/env.h"

namespace pstrain {

// Stateless, so any number may exist; thread-safe.
class PosixEnv final : public Env {
 public:
  PosixEnv() = default;
  PosixEnv(const PosixEnv&) = delete;
  PosixEnv& operator=(const PosixEnv&) = delete;

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
  absl::Time Now() override;
};

// The status for a failed POSIX call on `path`: the code follows `error`
// (an errno value), the message is "<path>: <what> failed: <strerror>".
absl::Status PosixError(const std::string& path, absl::string_view what, int error);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_POSIX_ENV_H_
