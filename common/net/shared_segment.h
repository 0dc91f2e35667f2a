#ifndef PSTRAIN_COMMON_NET_SHARED_SEGMENT_H_
#define PSTRAIN_COMMON_NET_SHARED_SEGMENT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/net/unique_fd.h"

namespace pstrain {

// A block of shared memory that two processes on one host map to exchange
// tensor bytes without copying them through a socket. It is a memfd: it has
// no name in any file system, so nothing is left behind when the processes
// die, and a peer gets it only by being sent its descriptor (see
// SendFrame in common/net/unix_socket.h). Linux only.
//
// Thread-safe: the object is immutable after construction. The bytes are not
// synchronised: the processes and threads that share them coordinate their
// reads and writes themselves.
class SharedSegment {
 public:
  // Creates a segment of `size` bytes, mapped read-write and zero-filled.
  // Pages take memory only once touched, so a large segment that is mostly
  // unused costs little. The segment is sealed against shrinking and growing
  // (and against changing its seals) before anyone else sees it, so a peer
  // can map it without fear of SIGBUS from the other side truncating it.
  // `debug_name` shows in /proc/<pid>/fd and /proc/<pid>/maps as
  // "memfd:<debug_name>"; only its first 249 bytes are kept.
  //
  // InvalidArgument: size <= 0.
  // ResourceExhausted: out of memory, descriptors or address space.
  // Internal: any other failure of memfd_create, ftruncate, fcntl or mmap.
  static absl::StatusOr<std::unique_ptr<SharedSegment>> Create(int64_t size,
                                                               const std::string& debug_name);

  // Maps a segment whose descriptor `fd` came from another process (usually a
  // SharedSegment::Create there). Takes ownership of `fd` in every case: on
  // failure it is closed. Only sealed segments are accepted, because a peer
  // that could shrink an unsealed one would make our reads crash with SIGBUS.
  //
  // FailedPrecondition: the segment is not sealed against shrinking and
  //   growing (also for anything that is not a memfd, or a bad descriptor),
  //   or it cannot be mapped read-write (e.g. opened read-only or sealed
  //   against writes).
  // InvalidArgument: its size is 0 or larger than `max_size`.
  // ResourceExhausted: out of memory or address space.
  // Internal: any other failure of fstat or mmap.
  static absl::StatusOr<std::unique_ptr<SharedSegment>> Adopt(int fd, int64_t max_size);

  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;

  // Unmaps the bytes and closes the descriptor. The peer's mapping, if any,
  // stays valid; the memory is freed when the last mapping and descriptor go.
  ~SharedSegment();

  // The first of size() bytes, shared read-write with every other mapping.
  char* data() const { return data_; }
  int64_t size() const { return size_; }
  // The descriptor, still owned by this object; send it to a peer (which
  // receives its own copy) to let it Adopt the segment.
  int fd() const { return fd_.get(); }

 private:
  SharedSegment(UniqueFd fd, char* data, int64_t size);

  const UniqueFd fd_;
  char* const data_;
  const int64_t size_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_SHARED_SEGMENT_H_
