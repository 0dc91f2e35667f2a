#include "common/checkpoint/test_env.h"

#include <utility>

#include "absl/strings/match.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

class TestWritableFile final : public WritableFile {
 public:
  TestWritableFile(TestEnv* env, std::string path, std::unique_ptr<WritableFile> base)
      : env_(env), path_(std::move(path)), base_(std::move(base)) {}

  absl::Status Append(absl::string_view data) override {
    RETURN_IF_ERROR(env_->Check(EnvOp::kAppend, path_));
    return base_->Append(data);
  }
  absl::Status Flush() override {
    RETURN_IF_ERROR(env_->Check(EnvOp::kAppend, path_));
    return base_->Flush();
  }
  absl::Status Sync() override {
    RETURN_IF_ERROR(env_->Check(EnvOp::kSync, path_));
    return base_->Sync();
  }
  absl::Status Close() override {
    // A crashed process closes nothing; what it had buffered is lost.
    if (env_->crashed()) return absl::AbortedError("simulated crash");
    return base_->Close();
  }

 private:
  TestEnv* const env_;
  const std::string path_;
  const std::unique_ptr<WritableFile> base_;
};

}  // namespace

TestEnv::TestEnv(Env* base, absl::Time now) : base_(base), now_(now) {}

void TestEnv::SetNow(absl::Time now) {
  absl::MutexLock lock(&mu_);
  now_ = now;
}

void TestEnv::AdvanceTime(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  now_ += d;
}

void TestEnv::FailOn(EnvOp op, const std::string& path_suffix, absl::Status error) {
  absl::MutexLock lock(&mu_);
  rules_.push_back(Rule{op, path_suffix, std::move(error), /*crash=*/false});
}

void TestEnv::CrashOn(EnvOp op, const std::string& path_suffix) {
  absl::MutexLock lock(&mu_);
  rules_.push_back(Rule{op, path_suffix, absl::AbortedError("simulated crash"), /*crash=*/true});
}

void TestEnv::ClearFailures() {
  absl::MutexLock lock(&mu_);
  rules_.clear();
  crashed_ = false;
}

bool TestEnv::crashed() {
  absl::MutexLock lock(&mu_);
  return crashed_;
}

absl::Status TestEnv::Check(EnvOp op, const std::string& path) {
  absl::MutexLock lock(&mu_);
  if (crashed_) return absl::AbortedError("simulated crash");
  for (const Rule& rule : rules_) {
    if (rule.op != op || !absl::EndsWith(path, rule.path_suffix)) continue;
    if (rule.crash) crashed_ = true;
    return rule.error;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<WritableFile>> TestEnv::NewWritableFile(const std::string& path) {
  RETURN_IF_ERROR(Check(EnvOp::kNewWritableFile, path));
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, base_->NewWritableFile(path));
  return std::make_unique<TestWritableFile>(this, path, std::move(file));
}

absl::StatusOr<std::unique_ptr<WritableFile>> TestEnv::NewAppendableFile(const std::string& path) {
  RETURN_IF_ERROR(Check(EnvOp::kNewAppendableFile, path));
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, base_->NewAppendableFile(path));
  return std::make_unique<TestWritableFile>(this, path, std::move(file));
}

absl::StatusOr<std::unique_ptr<SequentialFile>> TestEnv::NewSequentialFile(
    const std::string& path) {
  RETURN_IF_ERROR(Check(EnvOp::kNewSequentialFile, path));
  return base_->NewSequentialFile(path);
}

absl::StatusOr<FileInfo> TestEnv::Stat(const std::string& path) {
  RETURN_IF_ERROR(Check(EnvOp::kStat, path));
  return base_->Stat(path);
}

absl::StatusOr<std::vector<std::string>> TestEnv::ListDir(const std::string& dir) {
  RETURN_IF_ERROR(Check(EnvOp::kListDir, dir));
  return base_->ListDir(dir);
}

absl::Status TestEnv::CreateDir(const std::string& dir) {
  RETURN_IF_ERROR(Check(EnvOp::kCreateDir, dir));
  return base_->CreateDir(dir);
}

absl::Status TestEnv::RemoveFile(const std::string& path) {
  RETURN_IF_ERROR(Check(EnvOp::kRemoveFile, path));
  return base_->RemoveFile(path);
}

absl::Status TestEnv::RemoveDir(const std::string& dir) {
  RETURN_IF_ERROR(Check(EnvOp::kRemoveDir, dir));
  return base_->RemoveDir(dir);
}

absl::Status TestEnv::Rename(const std::string& from, const std::string& to) {
  RETURN_IF_ERROR(Check(EnvOp::kRename, from));
  return base_->Rename(from, to);
}

absl::Status TestEnv::TruncateFile(const std::string& path, int64_t size) {
  RETURN_IF_ERROR(Check(EnvOp::kTruncateFile, path));
  return base_->TruncateFile(path, size);
}

absl::Status TestEnv::SyncDir(const std::string& dir) {
  RETURN_IF_ERROR(Check(EnvOp::kSyncDir, dir));
  return base_->SyncDir(dir);
}

absl::StatusOr<std::string> TestEnv::RealPath(const std::string& path) {
  RETURN_IF_ERROR(Check(EnvOp::kStat, path));
  return base_->RealPath(path);
}

absl::Time TestEnv::Now() {
  absl::MutexLock lock(&mu_);
  return now_;
}

}  // namespace pstrain
