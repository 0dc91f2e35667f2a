#include "common/net/host_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/net/unique_fd.h"

namespace pstrain {
namespace {

constexpr char kBootIdPath[] = "/proc/sys/kernel/random/boot_id";
constexpr char kNetworkNamespacePath[] = "/proc/self/ns/net";

absl::Status CannotRead(const char* path, int error) {
  return absl::UnavailableError(absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
}

// The boot id: a random UUID the kernel picks at each boot.
absl::StatusOr<std::string> ReadBootId() {
  UniqueFd fd(::open(kBootIdPath, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return CannotRead(kBootIdPath, errno);
  // 36 characters and a newline; anything longer is not a boot id.
  char buffer[64];
  size_t size = 0;
  while (size < sizeof(buffer)) {
    const ssize_t count = ::read(fd.get(), buffer + size, sizeof(buffer) - size);
    if (count < 0) {
      if (errno == EINTR) continue;
      return CannotRead(kBootIdPath, errno);
    }
    if (count == 0) break;
    size += static_cast<size_t>(count);
  }
  const absl::string_view boot_id = absl::StripAsciiWhitespace(absl::string_view(buffer, size));
  if (boot_id.empty()) {
    return absl::UnavailableError(absl::StrCat("cannot read ", kBootIdPath, ": it is empty"));
  }
  return std::string(boot_id);
}

}  // namespace

absl::StatusOr<std::string> LocalHostIdentity() {
  absl::StatusOr<std::string> boot_id = ReadBootId();
  if (!boot_id.ok()) return boot_id.status();
  // stat follows the /proc link to the namespace itself, whose inode number
  // names it. st_dev is left out: every namespace lives in the one nsfs
  // instance of the kernel, so within a boot the inode alone is unique.
  struct stat network_namespace;
  if (::stat(kNetworkNamespacePath, &network_namespace) != 0) {
    return CannotRead(kNetworkNamespacePath, errno);
  }
  return absl::StrCat(*boot_id, ":", network_namespace.st_ino);
}

}  // namespace pstrain
