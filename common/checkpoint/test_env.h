#ifndef PSTRAIN_COMMON_CHECKPOINT_TEST_ENV_H_
#define PSTRAIN_COMMON_CHECKPOINT_TEST_ENV_H_

// An Env for tests: forwards to a real Env (a PosixEnv over a
// testing::TempDir() folder), reads time from a settable clock, and fails
// chosen operations to simulate a full disk, an I/O error or a crash.

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/checkpoint/env.h"

namespace pstrain {

enum class EnvOp {
  kNewWritableFile,
  kNewAppendableFile,
  kNewSequentialFile,
  kStat,
  kListDir,
  kCreateDir,
  kRemoveFile,
  kRemoveDir,
  kRename,  // matched on the source path
  kTruncateFile,
  kSyncDir,
  kAppend,  // WritableFile calls, matched on the file's path
  kSync,
};

// Thread-safe.
class TestEnv final : public Env {
 public:
  // `base` must outlive this. Time starts at `now`.
  explicit TestEnv(Env* base, absl::Time now = absl::FromUnixSeconds(1700000000));

  void SetNow(absl::Time now);
  void AdvanceTime(absl::Duration d);

  // Makes every later `op` on a path ending in `path_suffix` fail with
  // `error`, until ClearFailures. A suffix rather than a substring, so that
  // "ckpt-5.tmp" names the folder and not the files inside it.
  void FailOn(EnvOp op, const std::string& path_suffix, absl::Status error);
  // Simulates the process dying just before the first `op` on a path
  // ending in `path_suffix`: that call and every later call fail with
  // Aborted ("simulated crash"), so nothing is written or cleaned up
  // after it, until ClearFailures (the restart).
  void CrashOn(EnvOp op, const std::string& path_suffix);
  void ClearFailures();
  bool crashed();

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

  // Called by the files this Env hands out; returns the injected failure
  // for `op` on `path`, or OK.
  absl::Status Check(EnvOp op, const std::string& path);

 private:
  struct Rule {
    EnvOp op;
    std::string path_suffix;
    absl::Status error;
    bool crash;
  };

  Env* const base_;

  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  std::vector<Rule> rules_ ABSL_GUARDED_BY(mu_);
  bool crashed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_TEST_ENV_H_
