#include "common/net/shared_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

// memfd_create refuses names longer than NAME_MAX minus the "memfd:" prefix.
constexpr size_t kMaxMemfdNameBytes = 249;

// Resource shortages are worth telling apart: the caller may free memory or
// descriptors and try again, whereas anything else is a bug or a broken host.
absl::Status ErrnoStatus(int error, absl::string_view what) {
  const std::string message = absl::StrCat(what, ": ", std::strerror(error));
  switch (error) {
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case ENOSPC:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

// Maps `size` bytes of `fd` shared and read-write.
absl::StatusOr<char*> MapShared(int fd, int64_t size) {
  void* data =
      ::mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    const int error = errno;
    if (error == EACCES || error == EPERM) {
      return absl::FailedPreconditionError(
          absl::StrCat("the segment cannot be mapped read-write: ", std::strerror(error)));
    }
    return ErrnoStatus(error, absl::StrCat("mmap of ", size, " bytes"));
  }
  return static_cast<char*>(data);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SharedSegment>> SharedSegment::Create(
    int64_t size, const std::string& debug_name) {
  if (size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("a shared segment needs a positive size, not ", size));
  }
  const std::string name = debug_name.substr(0, kMaxMemfdNameBytes);
  // MFD_CLOEXEC: a child we exec must not inherit the segment by accident;
  // peers get it only when we send it.
  UniqueFd fd(::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) {
    const int error = errno;
    return ErrnoStatus(error, absl::StrCat("memfd_create ", name));
  }
  if (::ftruncate(fd.get(), size) != 0) {
    const int error = errno;
    return ErrnoStatus(error, absl::StrCat("ftruncate of memfd ", name, " to ", size, " bytes"));
  }
  // F_SEAL_SEAL as well, so that nobody can later add F_SEAL_FUTURE_WRITE,
  // which would stop the peer from mapping the segment writable.
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int error = errno;
    return ErrnoStatus(error, absl::StrCat("sealing memfd ", name));
  }
  absl::StatusOr<char*> data = MapShared(fd.get(), size);
  if (!data.ok()) return data.status();
  return std::unique_ptr<SharedSegment>(new SharedSegment(std::move(fd), *data, size));
}

absl::StatusOr<std::unique_ptr<SharedSegment>> SharedSegment::Adopt(int fd, int64_t max_size) {
  UniqueFd owned(fd);
  const int seals = ::fcntl(owned.get(), F_GET_SEALS);
  const int seals_error = errno;
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0 || (seals & F_SEAL_GROW) == 0) {
    const std::string detail = seals < 0 ? absl::StrCat("F_GET_SEALS: ", std::strerror(seals_error))
                                         : absl::StrCat("its seals are 0x", absl::Hex(seals));
    return absl::FailedPreconditionError(
        absl::StrCat("the segment is not sealed against shrinking and growing (", detail, ")"));
  }
  struct stat info;
  if (::fstat(owned.get(), &info) != 0) {
    const int error = errno;
    return ErrnoStatus(error, "fstat of the segment");
  }
  const int64_t size = info.st_size;
  if (size <= 0 || size > max_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("the segment has ", size, " bytes; expected from 1 to ", max_size));
  }
  absl::StatusOr<char*> data = MapShared(owned.get(), size);
  if (!data.ok()) return data.status();
  return std::unique_ptr<SharedSegment>(new SharedSegment(std::move(owned), *data, size));
}

SharedSegment::SharedSegment(UniqueFd fd, char* data, int64_t size)
    : fd_(std::move(fd)), data_(data), size_(size) {}

SharedSegment::~SharedSegment() { ::munmap(data_, static_cast<size_t>(size_)); }

}  // namespace pstrain
