#include "common/checkpoint/memory_env.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/checkpoint/file_path.h"

namespace pstrain {
namespace {

class MemoryWritableFile final : public WritableFile {
 public:
  MemoryWritableFile(MemoryEnv& env, std::string path) : env_(env), path_(std::move(path)) {}

  absl::Status Append(absl::string_view data) override {
    if (closed_) return absl::FailedPreconditionError(absl::StrCat(path_, ": closed"));
    return env_.AppendTo(path_, data);
  }
  absl::Status Flush() override { return Check(); }
  absl::Status Sync() override { return Check(); }
  absl::Status Close() override {
    absl::Status status = Check();
    closed_ = true;
    return status;
  }

 private:
  absl::Status Check() const {
    return closed_ ? absl::FailedPreconditionError(absl::StrCat(path_, ": closed"))
                   : absl::OkStatus();
  }

  MemoryEnv& env_;
  const std::string path_;
  bool closed_ = false;
};

// Reads a copy taken at open, as a file descriptor keeps reading the inode
// it opened.
class MemorySequentialFile final : public SequentialFile {
 public:
  explicit MemorySequentialFile(std::string contents) : contents_(std::move(contents)) {}

  absl::StatusOr<absl::string_view> Read(size_t n, char* scratch) override {
    const size_t count = std::min(n, contents_.size() - at_);
    std::memcpy(scratch, contents_.data() + at_, count);
    at_ += count;
    return absl::string_view(scratch, count);
  }

  absl::Status Skip(uint64_t n) override {
    at_ += static_cast<size_t>(std::min<uint64_t>(n, contents_.size() - at_));
    return absl::OkStatus();
  }

 private:
  const std::string contents_;
  size_t at_ = 0;
};

absl::Status NotFound(const std::string& path) {
  return absl::NotFoundError(absl::StrCat(path, ": no such file or folder"));
}

}  // namespace

MemoryEnv::MemoryEnv() { dirs_.insert("/"); }

absl::StatusOr<std::string> MemoryEnv::Normalize(const std::string& path) {
  if (path.empty() || path.front() != '/') {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not an absolute path"));
  }
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.emplace_back(part);
  }
  return absl::StrCat("/", absl::StrJoin(parts, "/"));
}

bool MemoryEnv::ParentExistsLocked(const std::string& path) const {
  return dirs_.count(Dirname(path)) > 0;
}

void MemoryEnv::PutFile(const std::string& path, std::string contents) {
  absl::StatusOr<std::string> normal = Normalize(path);
  if (!normal.ok()) return;
  if (!CreateDirs(*this, Dirname(*normal)).ok()) return;
  absl::MutexLock lock(&mu_);
  if (dirs_.count(*normal) > 0) return;
  files_[*normal] = std::move(contents);
}

absl::StatusOr<std::unique_ptr<WritableFile>> MemoryEnv::OpenForWrite(const std::string& path,
                                                                      bool truncate) {
  absl::StatusOr<std::string> normal = Normalize(path);
  if (!normal.ok()) return normal.status();
  absl::MutexLock lock(&mu_);
  if (dirs_.count(*normal) > 0) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": is a folder"));
  }
  if (!ParentExistsLocked(*normal)) return NotFound(path);
  std::string& contents = files_[*normal];
  if (truncate) contents.clear();
  return std::unique_ptr<WritableFile>(new MemoryWritableFile(*this, *normal));
}

absl::StatusOr<std::unique_ptr<WritableFile>> MemoryEnv::NewWritableFile(const std::string& path) {
  return OpenForWrite(path, /*truncate=*/true);
}

absl::StatusOr<std::unique_ptr<WritableFile>> MemoryEnv::NewAppendableFile(
    const std::string& path) {
  return OpenForWrite(path, /*truncate=*/false);
}

absl::StatusOr<std::string> MemoryEnv::Contents(const std::string& path) const {
  absl::StatusOr<std::string> normal = Normalize(path);
  if (!normal.ok()) return normal.status();
  absl::MutexLock lock(&mu_);
  auto file = files_.find(*normal);
  if (file == files_.end()) return NotFound(*normal);
  return file->second;
}

absl::Status MemoryEnv::AppendTo(const std::string& path, absl::string_view data) {
  absl::MutexLock lock(&mu_);
  auto file = files_.find(path);
  // Removed or renamed while open: the bytes go nowhere, as with an
  // unlinked inode.
  if (file != files_.end()) file->second.append(data.data(), data.size());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SequentialFile>> MemoryEnv::NewSequentialFile(
    const std::string& path) {
  absl::StatusOr<std::string> normal = Normalize(path);
  if (!normal.ok()) return normal.status();
  absl::MutexLock lock(&mu_);
  auto file = files_.find(*normal);
  if (file == files_.end()) {
    if (dirs_.count(*normal) > 0) {
      return absl::FailedPreconditionError(absl::StrCat(path, ": is a folder"));
    }
    return NotFound(path);
  }
  return std::unique_ptr<SequentialFile>(new MemorySequentialFile(file->second));
}

absl::StatusOr<FileInfo> MemoryEnv::Stat(const std::string& path) {
  absl::StatusOr<std::string> normal = Normalize(path);
  if (!normal.ok()) return normal.status();
  absl::MutexLock lock(&mu_);
  FileInfo info;
  if (dirs_.count(*normal) > 0) {
    info.is_directory = true;
    return info;
  }
  auto file = files_.find(*normal);
  if (file == files_.end()) return NotFound(path);
  info.size = static_cast<int64_t>(file->second.size());
  return info;
}

absl::StatusOr<std::vector<std::string>> MemoryEnv::ListDir(const std::string& dir) {
  absl::StatusOr<std::string> normal = Normalize(dir);
  if (!normal.ok()) return normal.status();
  absl::MutexLock lock(&mu_);
  if (dirs_.count(*normal) == 0) {
    if (files_.count(*normal) > 0) {
      return absl::FailedPreconditionError(absl::StrCat(dir, ": not a folder"));
    }
    return NotFound(dir);
  }
  std::vector<std::string> names;
  auto add_child = [&](const std::string& path) {
    if (path != "/" && Dirname(path) == *normal) names.emplace_back(Basename(path));
  };
  for (const std::string& d : dirs_) add_child(d);
  for (const auto& [f, contents] : files_) add_child(f);
  return names;
}

absl::Status MemoryEnv::CreateDir(const std::string& dir) {
  absl::StatusOr<std::string> normal = Normalize(dir);
  if (!normal.ok()) return normal.status();
  absl::MutexLock lock(&mu_);
  if (dirs_.count(*normal) > 0 || files_.count(*normal) > 0) {
    return absl::AlreadyExistsError(absl::StrCat(dir, ": exists"));
  }
  if (!ParentExistsLocked(*normal)) return NotFound(dir);
  dirs_.insert(*normal);
  return absl::OkStatus();
}

absl::Status MemoryEnv::RemoveFile(const std::string& path) {
  absl::StatusOr<std::string> normal = Normalize(path);
  if (!normal.ok()) return normal.status();
  absl::MutexLock lock(&mu_);
  if (dirs_.count(*normal) > 0) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": is a folder"));
  }
  if (files_.erase(*normal) == 0) return NotFound(path);
  return absl::OkStatus();
}

absl::Status MemoryEnv::RemoveDir(const std::string& dir) {
  absl::StatusOr<std::string> normal = Normalize(dir);
  if (!normal.ok()) return normal.status();
  absl::MutexLock lock(&mu_);
  if (dirs_.count(*normal) == 0) return NotFound(dir);
  if (*normal == "/") return absl::FailedPreconditionError("/: cannot be removed");
  for (const std::string& d : dirs_) {
    if (d != *normal && IsPathUnder(d, *normal)) {
      return absl::FailedPreconditionError(absl::StrCat(dir, ": not empty"));
    }
  }
  for (const auto& [f, contents] : files_) {
    if (IsPathUnder(f, *normal))
      return absl::FailedPreconditionError(absl::StrCat(dir, ": not empty"));
  }
  dirs_.erase(*normal);
  return absl::OkStatus();
}

absl::Status MemoryEnv::Rename(const std::string& from, const std::string& to) {
  absl::StatusOr<std::string> source = Normalize(from);
  if (!source.ok()) return source.status();
  absl::StatusOr<std::string> target = Normalize(to);
  if (!target.ok()) return target.status();
  absl::MutexLock lock(&mu_);
  if (*source == *target) return absl::OkStatus();
  if (!ParentExistsLocked(*target)) return NotFound(to);
  auto file = files_.find(*source);
  if (file != files_.end()) {
    if (dirs_.count(*target) > 0) {
      return absl::FailedPreconditionError(absl::StrCat(to, ": is a folder"));
    }
    std::string contents = std::move(file->second);
    files_.erase(file);
    files_[*target] = std::move(contents);
    return absl::OkStatus();
  }
  if (dirs_.count(*source) == 0) return NotFound(from);
  if (*source == "/" || IsPathUnder(*target, *source)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot move ", from, " into itself"));
  }
  if (files_.count(*target) > 0) {
    return absl::FailedPreconditionError(absl::StrCat(to, ": is not a folder"));
  }
  for (const std::string& d : dirs_) {
    if (d != *target && IsPathUnder(d, *target)) {
      return absl::FailedPreconditionError(absl::StrCat(to, ": not empty"));
    }
  }
  for (const auto& [f, contents] : files_) {
    if (IsPathUnder(f, *target))
      return absl::FailedPreconditionError(absl::StrCat(to, ": not empty"));
  }
  auto moved = [&](const std::string& path) { return *target + path.substr(source->size()); };
  std::set<std::string> dirs;
  for (const std::string& d : dirs_) dirs.insert(IsPathUnder(d, *source) ? moved(d) : d);
  std::map<std::string, std::string> files;
  for (auto& [f, contents] : files_) {
    files[IsPathUnder(f, *source) ? moved(f) : f] = std::move(contents);
  }
  dirs_ = std::move(dirs);
  files_ = std::move(files);
  return absl::OkStatus();
}

absl::Status MemoryEnv::TruncateFile(const std::string& path, int64_t size) {
  absl::StatusOr<std::string> normal = Normalize(path);
  if (!normal.ok()) return normal.status();
  absl::MutexLock lock(&mu_);
  auto file = files_.find(*normal);
  if (file == files_.end()) return NotFound(path);
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat(path, ": negative size"));
  file->second.resize(static_cast<size_t>(size));
  return absl::OkStatus();
}

absl::Status MemoryEnv::SyncDir(const std::string& dir) {
  absl::StatusOr<FileInfo> info = Stat(dir);
  if (!info.ok()) return info.status();
  if (!info->is_directory) return absl::FailedPreconditionError(absl::StrCat(dir, ": not a folder"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> MemoryEnv::RealPath(const std::string& path) {
  absl::StatusOr<std::string> normal = Normalize(path);
  if (!normal.ok()) return normal.status();
  absl::MutexLock lock(&mu_);
  if (dirs_.count(*normal) == 0 && files_.count(*normal) == 0) return NotFound(path);
  return *normal;
}

absl::Time MemoryEnv::Now() { return absl::FromUnixSeconds(1700000000); }

}  // namespace pstrain
