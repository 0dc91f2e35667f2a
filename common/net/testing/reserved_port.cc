#include "common/net/testing/reserved_port.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace testing_net {

absl::StatusOr<ReservedPort> ReservedPort::OnLoopback() {
  UniqueFd socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!socket.valid()) {
    return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  }
  const int on = 1;
  if (::setsockopt(socket.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0) {
    return absl::UnavailableError(absl::StrCat("SO_REUSEADDR: ", std::strerror(errno)));
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(socket.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return absl::UnavailableError(absl::StrCat("binding a loopback port: ", std::strerror(errno)));
  }
  return ReservedPort(std::move(socket), ntohs(address.sin_port));
}

}  // namespace testing_net
}  // namespace pstrain
