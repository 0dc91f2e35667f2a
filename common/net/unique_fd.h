#ifndef PSTRAIN_COMMON_NET_UNIQUE_FD_H_
#define PSTRAIN_COMMON_NET_UNIQUE_FD_H_

#include <unistd.h>

namespace pstrain {

// Sole owner of a file descriptor: closes it when destroyed or reset. Movable,
// not copyable. Not thread-safe: like std::unique_ptr, one thread at a time
// may change a UniqueFd; the descriptor itself may be used from any thread.
class UniqueFd {
 public:
  // Owns nothing (get() is -1).
  UniqueFd() = default;
  // Takes ownership of `fd`; -1 (or any negative value) means nothing.
  explicit UniqueFd(int fd) : fd_(fd) {}

  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  ~UniqueFd() { reset(); }

  // The descriptor, still owned by this object; -1 if none.
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Gives up ownership without closing; returns the descriptor (-1 if none).
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

  // Closes the owned descriptor, if any, and takes ownership of `fd`.
  void reset(int fd = -1) {
    // Never retry close() on EINTR: Linux has already released the number,
    // and a retry could close a descriptor another thread has just opened.
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_UNIQUE_FD_H_
