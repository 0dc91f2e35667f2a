#ifndef PSTRAIN_COMMON_NET_UNIX_SOCKET_H_
#define PSTRAIN_COMMON_NET_UNIX_SOCKET_H_

// Framed connections between processes on one host over Unix domain stream
// sockets in Linux's abstract namespace, able to pass a file descriptor (such
// as a SharedSegment's) with a frame. Linux only.
//
// Abstract names live in the network namespace, not in the file system: the
// name disappears with the last socket bound to it, so a crashed process
// leaves nothing behind to unlink, and only processes in the same network
// namespace can connect (see common/net/host_identity.h to tell whether a
// peer shares ours).
//
// A frame on the wire is a 4-byte little-endian length, then that many bytes.
// The header also gives a descriptor sent with an empty frame the byte of
// data it must travel with on a stream socket.
//
// The functions keep no state: they are thread-safe as far as the kernel
// makes concurrent calls on one socket safe. Two threads must not send (or
// receive) frames on the same socket at once, or their bytes interleave.

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/net/unique_fd.h"

namespace pstrain {

// The longest abstract name: sun_path's 108 bytes less the leading '\0'.
inline constexpr size_t kMaxAbstractSocketNameBytes = 107;

// Returns a listening socket (blocking, close-on-exec) bound to the abstract
// name `name`, which may hold any bytes. Processes in other PID namespaces
// (containers, Bazel's test sandbox) can share our network namespace, so a
// name made unique only by getpid() can collide.
//
// InvalidArgument: `name` is empty or longer than 107 bytes.
// AlreadyExists: a socket in this network namespace is bound to `name`.
// ResourceExhausted: out of descriptors or kernel memory.
// Unavailable: bind or listen failed otherwise (e.g. refused by a security
//   module).
absl::StatusOr<UniqueFd> ListenOnAbstractSocket(const std::string& name, int backlog);

// Returns a socket (blocking, close-on-exec) connected to the listener bound
// to the abstract name `name`. Blocks while that listener's backlog is full.
//
// InvalidArgument: `name` is empty or longer than 107 bytes.
// Unavailable: nobody listens on `name` in this network namespace.
// ResourceExhausted: out of descriptors or kernel memory.
// Internal: any other failure of socket or connect.
absl::StatusOr<UniqueFd> ConnectToAbstractSocket(const std::string& name);

// Waits for and returns the next connection (close-on-exec) on the listening
// socket `listener`, retrying when a signal interrupts the wait.
//
// Unavailable: `listener` is non-blocking and nobody is waiting to connect.
// ResourceExhausted: out of descriptors or kernel memory.
// Internal: `listener` is not a listening socket, or accept failed otherwise.
absl::StatusOr<UniqueFd> AcceptConnection(int listener);

// Sends `bytes` as one frame on the connected stream socket `socket`, with a
// duplicate of `fd_to_pass` attached when it is >= 0 (the caller keeps its own
// copy). Blocks until the whole frame is in the socket buffer.
//
// InvalidArgument: `bytes` is 4 GiB or longer.
// Unavailable: the peer closed the socket (never SIGPIPE).
// ResourceExhausted: out of kernel memory, or too many descriptors in flight.
// Internal: any other failure of sendmsg (e.g. `fd_to_pass` is not open).
// After any error but InvalidArgument, part of the frame may have been sent:
// close the socket.
absl::Status SendFrame(int socket, absl::string_view bytes, int fd_to_pass = -1);

// One frame as received: its bytes and the descriptor sent with it, if any
// (fd.valid() is false otherwise).
struct ReceivedFrame {
  std::string bytes;
  UniqueFd fd;
};

// Receives the next frame from the connected stream socket `socket`, waiting
// until `deadline` (absl::InfiniteFuture() waits for ever). Reads exactly one
// frame, never into the next, so the descriptor of a later frame stays with
// that frame. A received descriptor is close-on-exec.
//
// DeadlineExceeded: the deadline passed before the whole frame arrived.
// InvalidArgument: the frame is longer than `max_bytes` (the message names
//   both), or more than one descriptor came with it (all are closed).
// Unavailable: the peer closed the socket before a whole frame arrived.
// Internal: any other failure of poll or recvmsg.
// After any error the socket may be part-way through a frame: close it.
absl::StatusOr<ReceivedFrame> ReceiveFrame(int socket, int64_t max_bytes, absl::Time deadline);

// Who is at the other end of a connected Unix socket, as the kernel recorded
// it when the peer connected (or, for the connecting side, when the listener
// called listen). The peer cannot forge it.
struct PeerCredentials {
  pid_t pid = 0;  // In our PID namespace; 0 if the peer's is not visible from it.
  uid_t uid = 0;
  gid_t gid = 0;
};

// Returns the credentials of the peer of the connected Unix socket `socket`.
//
// Internal: `socket` is not a Unix socket, or getsockopt failed otherwise.
absl::StatusOr<PeerCredentials> PeerCredentialsOf(int socket);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_UNIX_SOCKET_H_
