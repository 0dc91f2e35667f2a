#include "common/net/http_get.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/net/host_port.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// Closes the descriptor on every path out.
class SocketCloser {
 public:
  explicit SocketCloser(int fd) : fd_(fd) {}
  ~SocketCloser() { ::close(fd_); }
  SocketCloser(const SocketCloser&) = delete;
  SocketCloser& operator=(const SocketCloser&) = delete;

 private:
  const int fd_;
};

int MillisLeft(absl::Time deadline) {
  const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
  return left < 0 ? 0 : static_cast<int>(left);
}

// Waits until `fd` is ready for `events` or the deadline passes.
absl::Status WaitReady(int fd, short events, absl::Time deadline, const std::string& address) {
  pollfd entry{fd, events, 0};
  int ready;
  do {
    ready = ::poll(&entry, 1, MillisLeft(deadline));
  } while (ready < 0 && errno == EINTR);
  if (ready == 0) return absl::DeadlineExceededError(absl::StrCat("no answer from ", address));
  if (ready < 0) return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
  return absl::OkStatus();
}

absl::StatusOr<int> Connect(const HostPort& endpoint, absl::Time deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* resolved = nullptr;
  const std::string port = absl::StrCat(endpoint.port);
  if (int error = ::getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &resolved)) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve ", endpoint.host, ": ", ::gai_strerror(error)));
  }
  absl::Status last = absl::UnavailableError(absl::StrCat("no address for ", endpoint.host));
  for (addrinfo* candidate = resolved; candidate != nullptr; candidate = candidate->ai_next) {
    int fd = ::socket(candidate->ai_family, candidate->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                      candidate->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, candidate->ai_addr, candidate->ai_addrlen) == 0 || errno == EINPROGRESS) {
      absl::Status ready = WaitReady(fd, POLLOUT, deadline, endpoint.ToString());
      int error = 0;
      socklen_t length = sizeof(error);
      if (ready.ok()) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
      if (ready.ok() && error == 0) {
        ::freeaddrinfo(resolved);
        return fd;
      }
      last = ready.ok()
                 ? absl::UnavailableError(absl::StrCat("cannot connect to ", endpoint.ToString(),
                                                       ": ", std::strerror(error)))
                 : ready;
    }
    ::close(fd);
  }
  ::freeaddrinfo(resolved);
  return last;
}

}  // namespace

absl::StatusOr<std::string> HttpGet(const std::string& address, const std::string& path,
                                    absl::Duration timeout) {
  ASSIGN_OR_RETURN(HostPort endpoint, ParseHostPort(address));
  const absl::Time deadline = absl::Now() + timeout;
  ASSIGN_OR_RETURN(int fd, Connect(endpoint, deadline));
  SocketCloser closer(fd);

  const std::string request =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: ", address, "\r\nConnection: close\r\n\r\n");
  size_t sent = 0;
  while (sent < request.size()) {
    RETURN_IF_ERROR(WaitReady(fd, POLLOUT, deadline, address));
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("send to ", address, ": ", std::strerror(errno)));
    }
    if (n > 0) sent += n;
  }

  std::string response;
  char buffer[16384];
  for (;;) {
    RETURN_IF_ERROR(WaitReady(fd, POLLIN, deadline, address));
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return absl::UnavailableError(
          absl::StrCat("recv from ", address, ": ", std::strerror(errno)));
    }
    response.append(buffer, n);
  }

  const size_t header_end = response.find("\r\n\r\n");
  if (header_end == std::string::npos) {
    return absl::InternalError(absl::StrCat("malformed HTTP response from ", address));
  }
  const std::string status_line = response.substr(0, response.find("\r\n"));
  std::vector<std::string> parts = absl::StrSplit(status_line, ' ');
  int code = 0;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[1], &code)) {
    return absl::InternalError(
        absl::StrCat("malformed HTTP status line from ", address, ": ", status_line));
  }
  if (code != 200) {
    return absl::InternalError(absl::StrCat("GET http://", address, path, ": ", status_line));
  }
  return response.substr(header_end + 4);
}

}  // namespace pstrain
