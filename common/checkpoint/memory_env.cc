#include "common/checkpoint/memory_env.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

absl::Status NoSuchFile(const std::string& path) {
  return absl::NotFoundError(absl::StrCat(path, ": no such file in memory"));
}

class MemoryWritableFile final : public WritableFile {
 public:
  explicit MemoryWritableFile(std::shared_ptr<MemoryEnv::Data> data) : data_(std::move(data)) {}

  absl::Status Append(absl::string_view bytes) override {
    if (data_ == nullptr) return absl::FailedPreconditionError("the file is closed");
    absl::MutexLock l(&data_->mu);
    data_->bytes.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  absl::Status Flush() override { return Open(); }
  absl::Status Sync() override { return Open(); }
  absl::Status Close() override {
    RETURN_IF_ERROR(Open());
    data_ = nullptr;
    return absl::OkStatus();
  }

 private:
  absl::Status Open() const {
    return data_ != nullptr ? absl::OkStatus()
                            : absl::FailedPreconditionError("the file is closed");
  }

  std::shared_ptr<MemoryEnv::Data> data_;
};

class MemorySequentialFile final : public SequentialFile {
 public:
  explicit MemorySequentialFile(std::shared_ptr<MemoryEnv::Data> data) : data_(std::move(data)) {}

  absl::StatusOr<absl::string_view> Read(size_t n, char* scratch) override {
    absl::MutexLock l(&data_->mu);
    const size_t start = std::min(position_, data_->bytes.size());
    const size_t count = std::min(n, data_->bytes.size() - start);
    std::copy_n(data_->bytes.data() + start, count, scratch);
    position_ = start + count;
    return absl::string_view(scratch, count);
  }
  absl::Status Skip(uint64_t n) override {
    position_ += n;
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<MemoryEnv::Data> data_;
  size_t position_ = 0;
};

}  // namespace

absl::Status MemoryEnv::CheckParentLocked(const std::string& path) const {
  if (!absl::StartsWith(path, "/")) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an absolute path"));
  }
  if (!dirs_.contains(Dirname(path))) {
    return absl::NotFoundError(absl::StrCat(Dirname(path), ": no such folder in memory"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<MemoryEnv::Data>> MemoryEnv::OpenFile(const std::string& path,
                                                                     bool create, bool truncate) {
  absl::MutexLock l(&mu_);
  if (dirs_.contains(path))
    return absl::FailedPreconditionError(absl::StrCat(path, " is a folder"));
  auto it = files_.find(path);
  if (it == files_.end()) {
    if (!create) return NoSuchFile(path);
    RETURN_IF_ERROR(CheckParentLocked(path));
    it = files_.emplace(path, std::make_shared<Data>()).first;
  }
  if (truncate) {
    absl::MutexLock d(&it->second->mu);
    it->second->bytes.clear();
  }
  return it->second;
}

absl::StatusOr<std::string> MemoryEnv::Contents(const std::string& path) const {
  std::shared_ptr<Data> data;
  {
    absl::ReaderMutexLock l(&mu_);
    auto it = files_.find(path);
    if (it == files_.end()) return NoSuchFile(path);
    data = it->second;
  }
  absl::MutexLock d(&data->mu);
  return data->bytes;
}

absl::Status MemoryEnv::Put(const std::string& path, std::string bytes) {
  ASSIGN_OR_RETURN(std::shared_ptr<Data> data, OpenFile(path, true, true));
  absl::MutexLock d(&data->mu);
  data->bytes = std::move(bytes);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<WritableFile>> MemoryEnv::NewWritableFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::shared_ptr<Data> data, OpenFile(path, true, true));
  return std::unique_ptr<WritableFile>(new MemoryWritableFile(std::move(data)));
}

absl::StatusOr<std::unique_ptr<WritableFile>> MemoryEnv::NewAppendableFile(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::shared_ptr<Data> data, OpenFile(path, true, false));
  return std::unique_ptr<WritableFile>(new MemoryWritableFile(std::move(data)));
}

absl::StatusOr<std::unique_ptr<SequentialFile>> MemoryEnv::NewSequentialFile(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::shared_ptr<Data> data, OpenFile(path, false, false));
  return std::unique_ptr<SequentialFile>(new MemorySequentialFile(std::move(data)));
}

absl::StatusOr<FileInfo> MemoryEnv::Stat(const std::string& path) {
  FileInfo info;
  std::shared_ptr<Data> data;
  {
    absl::ReaderMutexLock l(&mu_);
    if (dirs_.contains(path)) {
      info.is_directory = true;
      return info;
    }
    auto it = files_.find(path);
    if (it == files_.end()) return NoSuchFile(path);
    data = it->second;
  }
  absl::MutexLock d(&data->mu);
  info.size = static_cast<int64_t>(data->bytes.size());
  return info;
}

absl::StatusOr<std::vector<std::string>> MemoryEnv::ListDir(const std::string& dir) {
  absl::ReaderMutexLock l(&mu_);
  if (!dirs_.contains(dir)) return NoSuchFile(dir);
  std::vector<std::string> names;
  auto add_children = [&](const std::string& path) {
    if (path != dir && Dirname(path) == dir) names.emplace_back(Basename(path));
  };
  for (const auto& [path, data] : files_) add_children(path);
  for (const std::string& path : dirs_) add_children(path);
  return names;
}

absl::Status MemoryEnv::CreateDir(const std::string& dir) {
  absl::MutexLock l(&mu_);
  if (dirs_.contains(dir) || files_.contains(dir)) {
    return absl::AlreadyExistsError(absl::StrCat(dir, " exists"));
  }
  RETURN_IF_ERROR(CheckParentLocked(dir));
  dirs_.insert(dir);
  return absl::OkStatus();
}

absl::Status MemoryEnv::RemoveFile(const std::string& path) {
  absl::MutexLock l(&mu_);
  if (files_.erase(path) == 0) return NoSuchFile(path);
  return absl::OkStatus();
}

absl::Status MemoryEnv::RemoveDir(const std::string& dir) {
  absl::MutexLock l(&mu_);
  if (!dirs_.contains(dir)) return NoSuchFile(dir);
  for (const auto& [path, data] : files_) {
    if (Dirname(path) == dir) {
      return absl::FailedPreconditionError(absl::StrCat(dir, " is not empty"));
    }
  }
  for (const std::string& path : dirs_) {
    if (path != dir && Dirname(path) == dir) {
      return absl::FailedPreconditionError(absl::StrCat(dir, " is not empty"));
    }
  }
  dirs_.erase(dir);
  return absl::OkStatus();
}

absl::Status MemoryEnv::Rename(const std::string& from, const std::string& to) {
  absl::MutexLock l(&mu_);
  auto it = files_.find(from);
  if (it == files_.end()) {
    // Folders are not renamed by the files written here.
    return NoSuchFile(from);
  }
  RETURN_IF_ERROR(CheckParentLocked(to));
  std::shared_ptr<Data> data = std::move(it->second);
  files_.erase(it);
  files_[to] = std::move(data);
  return absl::OkStatus();
}

absl::Status MemoryEnv::TruncateFile(const std::string& path, int64_t size) {
  ASSIGN_OR_RETURN(std::shared_ptr<Data> data, OpenFile(path, false, false));
  absl::MutexLock d(&data->mu);
  data->bytes.resize(static_cast<size_t>(std::max<int64_t>(0, size)));
  return absl::OkStatus();
}

absl::Status MemoryEnv::SyncDir(const std::string& dir) {
  absl::ReaderMutexLock l(&mu_);
  return dirs_.contains(dir) ? absl::OkStatus() : NoSuchFile(dir);
}

absl::StatusOr<std::string> MemoryEnv::RealPath(const std::string& path) {
  RETURN_IF_ERROR(Stat(path).status());
  return path;
}

}  // namespace pstrain
