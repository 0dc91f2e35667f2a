#include "common/net/unix_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr size_t kHeaderBytes = 4;

// Room for exactly one descriptor: anything more is cut off by the kernel
// (which closes what does not fit) and flagged with MSG_CTRUNC.
union OneDescriptorControl {
  struct cmsghdr header;
  char bytes[CMSG_SPACE(sizeof(int))];
};

// "@name" is how ss(8) and /proc/net/unix show abstract names.
std::string DescribeName(const std::string& name) {
  return absl::StrCat("abstract socket @", absl::CHexEscape(name));
}

bool IsResourceShortage(int error) {
  return error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM;
}

struct AbstractAddress {
  sockaddr_un address;
  socklen_t length;
};

absl::StatusOr<AbstractAddress> MakeAbstractAddress(const std::string& name) {
  if (name.empty() || name.size() > kMaxAbstractSocketNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat("an abstract socket name needs 1 to ",
                                                   kMaxAbstractSocketNameBytes, " bytes; ",
                                                   DescribeName(name), " has ", name.size()));
  }
  AbstractAddress result;
  std::memset(&result.address, 0, sizeof(result.address));
  result.address.sun_family = AF_UNIX;
  // The leading '\0' puts the name in the abstract namespace. The length
  // counts only the name's bytes, not the rest of sun_path: the kernel treats
  // every byte within the length as part of the name, so padding zeros would
  // make a different name from the one a peer asks for.
  result.address.sun_path[0] = '\0';
  std::memcpy(result.address.sun_path + 1, name.data(), name.size());
  result.length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return result;
}

absl::StatusOr<UniqueFd> NewStreamSocket(const std::string& name) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    const int error = errno;
    const std::string message =
        absl::StrCat("socket for ", DescribeName(name), ": ", std::strerror(error));
    if (IsResourceShortage(error)) return absl::ResourceExhaustedError(message);
    return absl::InternalError(message);
  }
  return fd;
}

// Waits until `socket` is readable, has hung up or has failed (recvmsg then
// tells which).
absl::Status WaitUntilReadable(int socket, absl::Time deadline) {
  while (true) {
    pollfd request = {socket, POLLIN, 0};
    timespec timeout;
    timespec* timeout_or_forever = nullptr;
    if (deadline != absl::InfiniteFuture()) {
      // ppoll rather than poll: a timeout in milliseconds would round a
      // deadline less than 1 ms away down to a busy loop.
      timeout = absl::ToTimespec(std::max(deadline - absl::Now(), absl::ZeroDuration()));
      timeout_or_forever = &timeout;
    }
    const int ready = ::ppoll(&request, 1, timeout_or_forever, nullptr);
    if (ready > 0) return absl::OkStatus();
    if (ready == 0) {
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError("the deadline passed before a whole frame arrived");
      }
      continue;  // woke early
    }
    const int error = errno;
    if (error == EINTR) continue;
    return absl::InternalError(absl::StrCat("poll: ", std::strerror(error)));
  }
}

// Moves the descriptors that came with `message` into `fd`, allowing one per
// frame; `fd` may hold one from an earlier part of the same frame.
absl::Status TakeDescriptors(msghdr* message, UniqueFd* fd) {
  std::vector<UniqueFd> received;
  for (cmsghdr* control = CMSG_FIRSTHDR(message); control != nullptr;
       control = CMSG_NXTHDR(message, control)) {
    if (control->cmsg_level != SOL_SOCKET || control->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (control->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received_fd;
      std::memcpy(&received_fd, CMSG_DATA(control) + i * sizeof(int), sizeof(int));
      received.emplace_back(received_fd);
    }
  }
  if ((message->msg_flags & MSG_CTRUNC) != 0 || received.size() + (fd->valid() ? 1 : 0) > 1) {
    fd->reset();  // `received` closes the rest
    return absl::InvalidArgumentError(
        "more than one descriptor came with a frame (or this process had no free descriptor "
        "to take one); all were closed");
  }
  if (!received.empty()) *fd = std::move(received.front());
  return absl::OkStatus();
}

// Reads exactly `size` bytes into `buffer`, collecting a descriptor into `fd`.
absl::Status ReceiveExactly(int socket, char* buffer, size_t size, absl::Time deadline,
                            UniqueFd* fd) {
  size_t received = 0;
  while (received < size) {
    RETURN_IF_ERROR(WaitUntilReadable(socket, deadline));
    iovec part = {buffer + received, size - received};
    OneDescriptorControl control;
    msghdr message = {};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof(control.bytes);
    const ssize_t count = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    if (count < 0) {
      const int error = errno;
      if (error == EINTR || error == EAGAIN || error == EWOULDBLOCK) continue;
      if (error == ECONNRESET) {
        return absl::UnavailableError(
            absl::StrCat("the peer closed the socket: ", std::strerror(error)));
      }
      return absl::InternalError(absl::StrCat("recvmsg: ", std::strerror(error)));
    }
    RETURN_IF_ERROR(TakeDescriptors(&message, fd));
    if (count == 0) return absl::UnavailableError("the peer closed the socket");
    received += static_cast<size_t>(count);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<UniqueFd> ListenOnAbstractSocket(const std::string& name, int backlog) {
  ASSIGN_OR_RETURN(const AbstractAddress address, MakeAbstractAddress(name));
  ASSIGN_OR_RETURN(UniqueFd fd, NewStreamSocket(name));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address.address), address.length) != 0) {
    const int error = errno;
    const std::string message =
        absl::StrCat("bind to ", DescribeName(name), ": ", std::strerror(error));
    // Abstract names vanish with their socket, so EADDRINUSE means a live
    // socket holds the name, not a leftover file.
    if (error == EADDRINUSE) return absl::AlreadyExistsError(message);
    if (IsResourceShortage(error)) return absl::ResourceExhaustedError(message);
    return absl::UnavailableError(message);
  }
  if (::listen(fd.get(), backlog) != 0) {
    const int error = errno;
    return absl::UnavailableError(
        absl::StrCat("listen on ", DescribeName(name), ": ", std::strerror(error)));
  }
  return fd;
}

absl::StatusOr<UniqueFd> ConnectToAbstractSocket(const std::string& name) {
  ASSIGN_OR_RETURN(const AbstractAddress address, MakeAbstractAddress(name));
  ASSIGN_OR_RETURN(UniqueFd fd, NewStreamSocket(name));
  while (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address.address), address.length) !=
         0) {
    const int error = errno;
    // A Unix socket interrupted while waiting for room in the backlog is
    // left unconnected, so connecting again is safe (unlike TCP).
    if (error == EINTR) continue;
    const std::string message =
        absl::StrCat("connect to ", DescribeName(name), ": ", std::strerror(error));
    if (error == ECONNREFUSED || error == ENOENT || error == EAGAIN || error == ETIMEDOUT) {
      return absl::UnavailableError(message);
    }
    if (IsResourceShortage(error)) return absl::ResourceExhaustedError(message);
    return absl::InternalError(message);
  }
  return fd;
}

absl::StatusOr<UniqueFd> AcceptConnection(int listener) {
  while (true) {
    UniqueFd fd(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
    if (fd.valid()) return fd;
    const int error = errno;
    // ECONNABORTED: that peer gave up before we took it; wait for the next.
    if (error == EINTR || error == ECONNABORTED) continue;
    const std::string message = absl::StrCat("accept: ", std::strerror(error));
    if (error == EAGAIN || error == EWOULDBLOCK) return absl::UnavailableError(message);
    if (IsResourceShortage(error)) return absl::ResourceExhaustedError(message);
    return absl::InternalError(message);
  }
}

absl::Status SendFrame(int socket, absl::string_view bytes, int fd_to_pass) {
  if (bytes.size() > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a frame holds at most 2^32 - 1 bytes; this one has ", bytes.size()));
  }
  const uint32_t length = static_cast<uint32_t>(bytes.size());
  const char header[kHeaderBytes] = {
      static_cast<char>(length & 0xff), static_cast<char>((length >> 8) & 0xff),
      static_cast<char>((length >> 16) & 0xff), static_cast<char>((length >> 24) & 0xff)};
  const size_t total = kHeaderBytes + bytes.size();
  size_t sent = 0;
  // The kernel attaches the descriptor to the first bytes that go out, so it
  // rides with this frame's header. Until a sendmsg has sent something, the
  // descriptor has not gone and is attached again.
  bool descriptor_pending = fd_to_pass >= 0;
  while (sent < total) {
    iovec parts[2];
    size_t part_count = 0;
    if (sent < kHeaderBytes) {
      parts[part_count++] = {const_cast<char*>(header) + sent, kHeaderBytes - sent};
      if (!bytes.empty()) parts[part_count++] = {const_cast<char*>(bytes.data()), bytes.size()};
    } else {
      parts[part_count++] = {const_cast<char*>(bytes.data()) + (sent - kHeaderBytes), total - sent};
    }
    msghdr message = {};
    message.msg_iov = parts;
    message.msg_iovlen = part_count;
    OneDescriptorControl control;
    if (descriptor_pending) {
      std::memset(&control, 0, sizeof(control));
      message.msg_control = control.bytes;
      message.msg_controllen = sizeof(control.bytes);
      cmsghdr* attached = CMSG_FIRSTHDR(&message);
      attached->cmsg_level = SOL_SOCKET;
      attached->cmsg_type = SCM_RIGHTS;
      attached->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(attached), &fd_to_pass, sizeof(int));
    }
    // MSG_NOSIGNAL: a peer that went away is an error to return, not a
    // SIGPIPE that kills the process.
    const ssize_t count = ::sendmsg(socket, &message, MSG_NOSIGNAL);
    if (count < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      if (error == EAGAIN || error == EWOULDBLOCK) {
        // A non-blocking socket whose buffer is full: wait for room.
        pollfd request = {socket, POLLOUT, 0};
        if (::poll(&request, 1, -1) < 0) {
          const int poll_error = errno;
          if (poll_error != EINTR) {
            return absl::InternalError(absl::StrCat("poll: ", std::strerror(poll_error)));
          }
        }
        continue;
      }
      if (error == EPIPE || error == ECONNRESET) {
        return absl::UnavailableError(
            absl::StrCat("the peer closed the socket: ", std::strerror(error)));
      }
      if (IsResourceShortage(error) || error == ETOOMANYREFS) {
        return absl::ResourceExhaustedError(absl::StrCat("sendmsg: ", std::strerror(error)));
      }
      return absl::InternalError(absl::StrCat("sendmsg: ", std::strerror(error)));
    }
    sent += static_cast<size_t>(count);
    if (count > 0) descriptor_pending = false;
  }
  return absl::OkStatus();
}

absl::StatusOr<ReceivedFrame> ReceiveFrame(int socket, int64_t max_bytes, absl::Time deadline) {
  ReceivedFrame frame;
  unsigned char header[kHeaderBytes];
  RETURN_IF_ERROR(
      ReceiveExactly(socket, reinterpret_cast<char*>(header), kHeaderBytes, deadline, &frame.fd));
  const uint32_t length =
      static_cast<uint32_t>(header[0]) | (static_cast<uint32_t>(header[1]) << 8) |
      (static_cast<uint32_t>(header[2]) << 16) | (static_cast<uint32_t>(header[3]) << 24);
  if (static_cast<int64_t>(length) > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a frame of ", length, " bytes is longer than the limit of ", max_bytes, " bytes"));
  }
  frame.bytes.resize(length);
  RETURN_IF_ERROR(ReceiveExactly(socket, frame.bytes.data(), length, deadline, &frame.fd));
  return frame;
}

absl::StatusOr<PeerCredentials> PeerCredentialsOf(int socket) {
  ucred credentials;
  socklen_t size = sizeof(credentials);
  if (::getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) {
    const int error = errno;
    return absl::InternalError(absl::StrCat("getsockopt SO_PEERCRED: ", std::strerror(error)));
  }
  PeerCredentials result;
  result.pid = credentials.pid;
  result.uid = credentials.uid;
  result.gid = credentials.gid;
  return result;
}

}  // namespace pstrain
