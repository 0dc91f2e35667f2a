#include "common/checkpoint/posix_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

// Appends smaller than this are gathered before a write call; larger ones
// go to the file directly.
constexpr size_t kWriteBufferBytes = 64 << 10;

// Closes `fd` once: Linux releases the descriptor even when close fails with
// EINTR, so a retry could close a file another thread has just opened.
int CloseFd(int fd) { return ::close(fd); }

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {
    buffer_.reserve(kWriteBufferBytes);
  }
  ~PosixWritableFile() override {
    if (fd_ >= 0) (void)Close();
  }

  absl::Status Append(absl::string_view data) override {
    if (fd_ < 0) return Closed();
    if (buffer_.size() + data.size() <= kWriteBufferBytes) {
      buffer_.append(data.data(), data.size());
      return absl::OkStatus();
    }
    absl::Status flushed = Flush();
    if (!flushed.ok()) return flushed;
    if (data.size() <= kWriteBufferBytes) {
      buffer_.append(data.data(), data.size());
      return absl::OkStatus();
    }
    return WriteAll(data);
  }

  absl::Status Flush() override {
    if (fd_ < 0) return Closed();
    absl::Status written = WriteAll(buffer_);
    buffer_.clear();
    return written;
  }

  absl::Status Sync() override {
    absl::Status flushed = Flush();
    if (!flushed.ok()) return flushed;
    if (::fsync(fd_) != 0) return PosixError(path_, "fsync", errno);
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0) return Closed();
    absl::Status flushed = Flush();
    const int result = CloseFd(fd_);
    const int error = errno;
    fd_ = -1;
    if (!flushed.ok()) return flushed;
    if (result != 0) return PosixError(path_, "close", error);
    return absl::OkStatus();
  }

 private:
  absl::Status Closed() const {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": file already closed"));
  }

  absl::Status WriteAll(absl::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return PosixError(path_, "write", errno);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }

  const std::string path_;
  int fd_;
  std::string buffer_;
};

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixSequentialFile() override { CloseFd(fd_); }

  absl::StatusOr<absl::string_view> Read(size_t n, char* scratch) override {
    for (;;) {
      const ssize_t got = ::read(fd_, scratch, n);
      if (got >= 0) return absl::string_view(scratch, static_cast<size_t>(got));
      if (errno != EINTR) return PosixError(path_, "read", errno);
    }
  }

  absl::Status Skip(uint64_t n) override {
    if (n > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
      return PosixError(path_, "seek", EOVERFLOW);
    }
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) < 0) return PosixError(path_, "seek", errno);
    return absl::OkStatus();
  }

 private:
  const std::string path_;
  const int fd_;
};

absl::StatusOr<int> OpenFd(const std::string& path, int flags) {
  for (;;) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EINTR) return PosixError(path, "open", errno);
  }
}

}  // namespace

absl::Status PosixError(const std::string& path, absl::string_view what, int error) {
  const std::string message = absl::StrCat(path, ": ", what, " failed: ", std::strerror(error));
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
      return absl::ResourceExhaustedError(message);
    case ENOTDIR:
    case EISDIR:
    case ENOTEMPTY:
    case EXDEV:
    case ELOOP:
    case ENAMETOOLONG:
      return absl::FailedPreconditionError(message);
    case EIO:
      return absl::DataLossError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<std::unique_ptr<WritableFile>> PosixEnv::NewWritableFile(const std::string& path) {
  absl::StatusOr<int> fd = OpenFd(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (!fd.ok()) return fd.status();
  return std::make_unique<PosixWritableFile>(path, *fd);
}

absl::StatusOr<std::unique_ptr<WritableFile>> PosixEnv::NewAppendableFile(const std::string& path) {
  absl::StatusOr<int> fd = OpenFd(path, O_WRONLY | O_CREAT | O_APPEND);
  if (!fd.ok()) return fd.status();
  return std::make_unique<PosixWritableFile>(path, *fd);
}

absl::StatusOr<std::unique_ptr<SequentialFile>> PosixEnv::NewSequentialFile(
    const std::string& path) {
  absl::StatusOr<int> fd = OpenFd(path, O_RDONLY);
  if (!fd.ok()) return fd.status();
  return std::make_unique<PosixSequentialFile>(path, *fd);
}

absl::StatusOr<FileInfo> PosixEnv::Stat(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return PosixError(path, "stat", errno);
  FileInfo info;
  if (S_ISLNK(st.st_mode)) {
    info.is_symlink = true;
    // A dangling link is described as an empty, non-folder entry.
    if (::stat(path.c_str(), &st) != 0) return info;
  }
  info.is_directory = S_ISDIR(st.st_mode);
  if (S_ISREG(st.st_mode)) {
    info.size = static_cast<int64_t>(st.st_size);
    info.modified_unix_ns =
        static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  return info;
}

absl::StatusOr<std::vector<std::string>> PosixEnv::ListDir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return PosixError(dir, "opendir", errno);
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const struct dirent* entry = ::readdir(d);
    if (entry == nullptr) break;
    const absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  const int error = errno;
  ::closedir(d);
  if (error != 0) return PosixError(dir, "readdir", error);
  return names;
}

absl::Status PosixEnv::CreateDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0) return PosixError(dir, "mkdir", errno);
  return absl::OkStatus();
}

absl::Status PosixEnv::RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return PosixError(path, "unlink", errno);
  return absl::OkStatus();
}

absl::Status PosixEnv::RemoveDir(const std::string& dir) {
  if (::rmdir(dir.c_str()) != 0) return PosixError(dir, "rmdir", errno);
  return absl::OkStatus();
}

absl::Status PosixEnv::Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return PosixError(from, absl::StrCat("rename to ", to), errno);
  }
  return absl::OkStatus();
}

absl::Status PosixEnv::TruncateFile(const std::string& path, int64_t size) {
  if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0) {
    return PosixError(path, "truncate", errno);
  }
  return absl::OkStatus();
}

absl::Status PosixEnv::SyncDir(const std::string& dir) {
  absl::StatusOr<int> fd = OpenFd(dir, O_RDONLY | O_DIRECTORY);
  if (!fd.ok()) return fd.status();
  const int result = ::fsync(*fd);
  const int error = errno;
  CloseFd(*fd);
  if (result != 0) return PosixError(dir, "fsync", error);
  return absl::OkStatus();
}

absl::StatusOr<std::string> PosixEnv::RealPath(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return PosixError(path, "realpath", errno);
  std::string result(resolved);
  std::free(resolved);
  return result;
}

absl::Time PosixEnv::Now() { return absl::Now(); }

}  // namespace pstrain
