#include "common/net/frame_connection.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

namespace pstrain {
namespace {

// The frame format of common/net/unix_socket.h: a 4-byte little-endian
// length, then the bytes.
constexpr size_t kHeaderBytes = 4;

// The thread asks the socket for this much at a time (more while a longer
// frame is under way), so a burst of small frames costs one recv, not one
// per frame.
constexpr size_t kReadChunkBytes = 256 << 10;

// A receive buffer grown past this for a long frame is released once it
// has been handed over, rather than kept for the life of the connection.
constexpr size_t kMaxIdleReceiveBufferBytes = 1 << 20;

// Queued frames gathered into one sendmsg when the thread flushes.
constexpr size_t kMaxFramesPerWrite = 64;

void EncodeHeader(uint32_t length, char header[kHeaderBytes]) {
  header[0] = static_cast<char>(length & 0xff);
  header[1] = static_cast<char>((length >> 8) & 0xff);
  header[2] = static_cast<char>((length >> 16) & 0xff);
  header[3] = static_cast<char>((length >> 24) & 0xff);
}

uint32_t DecodeHeader(const char* header) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(header);
  return static_cast<uint32_t>(bytes[0]) | (static_cast<uint32_t>(bytes[1]) << 8) |
         (static_cast<uint32_t>(bytes[2]) << 16) | (static_cast<uint32_t>(bytes[3]) << 24);
}

absl::Status TooLongError(uint32_t length, int64_t max_frame_bytes) {
  return absl::InvalidArgumentError(absl::StrCat(
      "a frame of ", length, " bytes is longer than the limit of ", max_frame_bytes, " bytes"));
}

// Bytes received and not yet handed over as frames: [begin_, end_) of
// bytes_. Only the connection's thread uses it.
class ReceiveBuffer {
 public:
  const char* data() const { return bytes_.data() + begin_; }
  size_t size() const { return end_ - begin_; }

  // Returns room for at least `bytes` more bytes at the end, to be filled
  // and then counted with Commit.
  char* Reserve(size_t bytes) {
    if (bytes_.size() - end_ < bytes) {
      // Moving what is left of a frame to the front costs less than growing.
      if (begin_ > 0) {
        std::memmove(bytes_.data(), bytes_.data() + begin_, size());
        end_ -= begin_;
        begin_ = 0;
      }
      // std::string fills what it adds with zeros: done only on growth,
      // never for each read.
      if (bytes_.size() - end_ < bytes) bytes_.resize(end_ + bytes);
    }
    return bytes_.data() + end_;
  }

  void Commit(size_t bytes) { end_ += bytes; }

  // Whether a whole frame (header and bytes) is buffered.
  bool HasWholeFrame() const {
    return size() >= kHeaderBytes && size() - kHeaderBytes >= DecodeHeader(data());
  }

  void Consume(size_t bytes) {
    begin_ += bytes;
    if (begin_ < end_) return;
    begin_ = end_ = 0;
    if (bytes_.size() > kMaxIdleReceiveBufferBytes) std::string().swap(bytes_);
  }

 private:
  std::string bytes_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

// Writes what `socket` takes at once of `parts` and returns how many bytes
// that was: 0 if its buffer is full. An error means the connection is over.
absl::StatusOr<size_t> WriteWithoutWaiting(int socket, iovec* parts, size_t part_count) {
  msghdr message = {};
  message.msg_iov = parts;
  message.msg_iovlen = part_count;
  while (true) {
    // MSG_NOSIGNAL: a peer that went away is an error to report, not a
    // SIGPIPE that kills the process.
    const ssize_t count = ::sendmsg(socket, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (count >= 0) return static_cast<size_t>(count);
    const int error = errno;
    if (error == EINTR) continue;
    if (error == EAGAIN || error == EWOULDBLOCK) return 0;
    if (error == EPIPE || error == ECONNRESET) {
      return absl::UnavailableError(
          absl::StrCat("the peer closed the connection: ", std::strerror(error)));
    }
    return absl::InternalError(absl::StrCat("sendmsg: ", std::strerror(error)));
  }
}

// A frame in the send queue, with its header.
struct QueuedFrame {
  char header[kHeaderBytes];
  std::string bytes;
};

}  // namespace

struct FrameConnection::State {
  State(UniqueFd socket_fd, UniqueFd wakeup_fd, int64_t max_frame_bytes_in,
        FrameHandlers handlers_in, FrameReading reading_by_in)
      : socket(std::move(socket_fd)),
        wakeup(std::move(wakeup_fd)),
        max_frame_bytes(max_frame_bytes_in),
        handlers(std::move(handlers_in)),
        reading_by(reading_by_in) {}

  // The body of the connection's thread.
  void Run();

  // What DeliverFrames stopped at.
  enum class Delivery {
    kOwnerGone,  // the FrameConnection was destroyed from a handler
    kHeldBack,   // reading is off, or the connection has ended
    kDrained,    // reading is on and no whole frame is left in `input`
  };
  // `by_caller`: from Receive, which reads whatever SetReading says and
  // counts each frame it hands over.
  Delivery DeliverFrames(ReceiveBuffer* input, bool by_caller = false);

  // One turn of a caller that reads (kByCaller): hands over the frames
  // buffered already, or else waits for the socket until `deadline` and
  // hands over what it brings. DeadlineExceeded once `deadline` has
  // passed; Unavailable once the connection has ended.
  absl::Status ReadAsCaller(absl::Time deadline);

  // The peer's stream has ended and `input` holds what was read before:
  // the connection ends, unless frames are left to hand over first.
  void EndOnPeerCloseLocked(const ReceiveBuffer& input) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Reads what the socket holds into `input`; sets `*peer_closed` at the
  // end of the stream. Ends the connection on an error.
  void ReadSocket(ReceiveBuffer* input, bool* peer_closed);

  // Writes queued frames until the queue is empty or the socket is full.
  void FlushQueue();

  // Ends the connection for `why`, unless it has ended already.
  void EndLocked(absl::Status why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // What Send returns once the connection has ended.
  absl::Status EndedErrorLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return absl::UnavailableError(absl::StrCat("the connection has ended: ", end_reason.message()));
  }

  bool OnConnectionThreadLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return std::this_thread::get_id() == thread_id;
  }

  // Wakes the thread from poll so that it looks at the state again.
  void Wake() const {
    const uint64_t one = 1;
    // Fails only if the counter would overflow, and then the thread has
    // a wakeup pending anyway.
    const ssize_t ignored = ::write(wakeup.get(), &one, sizeof(one));
    (void)ignored;
  }

  // Constant after construction.
  const UniqueFd socket;
  const UniqueFd wakeup;  // an eventfd (non-blocking) the thread polls
  const int64_t max_frame_bytes;
  const FrameHandlers handlers;
  const FrameReading reading_by;
  // Set by Start before anyone else sees this State; joined or detached by
  // ~FrameConnection.
  std::thread thread;

  mutable absl::Mutex mu;
  // The connection's thread, set by it before it runs a handler.
  std::thread::id thread_id ABSL_GUARDED_BY(mu);
  bool reading ABSL_GUARDED_BY(mu) = true;
  // Set once, with end_reason, when the connection ends.
  bool ended ABSL_GUARDED_BY(mu) = false;
  absl::Status end_reason ABSL_GUARDED_BY(mu);
  // The FrameConnection was destroyed on the thread (from a handler): the
  // thread runs no handler any more and exits.
  bool owner_gone ABSL_GUARDED_BY(mu) = false;
  // Frames the socket did not take at once, oldest first. The front one
  // may be partly written already.
  std::deque<QueuedFrame> queue ABSL_GUARDED_BY(mu);
  size_t front_written ABSL_GUARDED_BY(mu) = 0;  // header included
  int64_t pending_bytes ABSL_GUARDED_BY(mu) = 0;

  // With kByCaller: a caller of Receive is reading. Only that caller uses
  // what follows the counter.
  bool caller_reading ABSL_GUARDED_BY(mu) = false;
  // Frames callers have handed over: a waiting caller looks at `done`
  // again whenever it moves.
  uint64_t frames_handed_over ABSL_GUARDED_BY(mu) = 0;
  ReceiveBuffer caller_input;
  bool caller_saw_peer_close = false;
};

void FrameConnection::State::EndOnPeerCloseLocked(const ReceiveBuffer& input) {
  if (input.HasWholeFrame()) return;
  EndLocked(absl::UnavailableError(
      input.size() == 0 ? "the peer closed the connection"
                        : "the peer closed the connection in the middle of a frame"));
}

void FrameConnection::State::EndLocked(absl::Status why) {
  if (ended) return;
  ended = true;
  end_reason = std::move(why);
  queue.clear();
  front_written = 0;
  pending_bytes = 0;
  // The peer sees the end now rather than when the descriptor is closed,
  // which waits for both the owner and the thread to let go of this State.
  // The descriptor stays open, so its number cannot be reused meanwhile.
  ::shutdown(socket.get(), SHUT_RDWR);
  if (!OnConnectionThreadLocked()) Wake();
}

FrameConnection::State::Delivery FrameConnection::State::DeliverFrames(ReceiveBuffer* input,
                                                                       bool by_caller) {
  // A caller's frame is counted once its handler has returned, under the
  // lock taken next.
  bool frame_to_count = false;
  while (input->size() >= kHeaderBytes) {
    const uint32_t length = DecodeHeader(input->data());
    {
      absl::MutexLock lock(&mu);
      if (frame_to_count) ++frames_handed_over;
      frame_to_count = false;
      if (owner_gone) return Delivery::kOwnerGone;
      // Looked at before each frame: a handler that turns reading off
      // gets no further frame.
      if (ended || (!by_caller && !reading)) return Delivery::kHeldBack;
      if (length > max_frame_bytes) {
        EndLocked(TooLongError(length, max_frame_bytes));
        return Delivery::kHeldBack;
      }
    }
    if (input->size() - kHeaderBytes < length) break;
    std::string frame(input->data() + kHeaderBytes, length);
    input->Consume(kHeaderBytes + length);
    handlers.on_frame(std::move(frame));
    frame_to_count = by_caller;
  }
  absl::MutexLock lock(&mu);
  if (frame_to_count) ++frames_handed_over;
  if (owner_gone) return Delivery::kOwnerGone;
  return ended || (!by_caller && !reading) ? Delivery::kHeldBack : Delivery::kDrained;
}

absl::Status FrameConnection::State::ReadAsCaller(absl::Time deadline) {
  if (!caller_input.HasWholeFrame() && !caller_saw_peer_close) {
    int timeout_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return absl::DeadlineExceededError("no frame arrived before the deadline");
      }
      // Rounded up, so that a wait never ends just short of the deadline.
      timeout_ms = static_cast<int>(
          std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, std::numeric_limits<int>::max()));
    }
    pollfd polled = {socket.get(), POLLIN, 0};
    const int ready = ::poll(&polled, 1, timeout_ms);
    if (ready < 0 && errno != EINTR) {
      const int error = errno;
      absl::MutexLock lock(&mu);
      EndLocked(absl::InternalError(absl::StrCat("poll: ", std::strerror(error))));
      return EndedErrorLocked();
    }
    // Nothing yet (or a signal): the caller looks at `done` and comes back.
    if (ready <= 0) return absl::OkStatus();
    ReadSocket(&caller_input, &caller_saw_peer_close);
  }
  DeliverFrames(&caller_input, /*by_caller=*/true);
  absl::MutexLock lock(&mu);
  if (caller_saw_peer_close) EndOnPeerCloseLocked(caller_input);
  if (ended) return EndedErrorLocked();
  return absl::OkStatus();
}

void FrameConnection::State::ReadSocket(ReceiveBuffer* input, bool* peer_closed) {
  size_t room = kReadChunkBytes;
  if (input->size() >= kHeaderBytes) {
    // Checked before making room for the frame: a corrupt or hostile
    // length must not allocate gigabytes.
    const uint32_t length = DecodeHeader(input->data());
    if (length > max_frame_bytes) {
      absl::MutexLock lock(&mu);
      EndLocked(TooLongError(length, max_frame_bytes));
      return;
    }
    const size_t frame_bytes = kHeaderBytes + static_cast<size_t>(length);
    if (input->size() < frame_bytes) room = std::max(room, frame_bytes - input->size());
  }
  char* into = input->Reserve(room);
  ssize_t count;
  do {
    count = ::recv(socket.get(), into, room, MSG_DONTWAIT);
  } while (count < 0 && errno == EINTR);
  if (count > 0) {
    input->Commit(static_cast<size_t>(count));
    return;
  }
  if (count == 0) {
    // Ended once the frames before it are handed over (see Run).
    *peer_closed = true;
    return;
  }
  const int error = errno;
  if (error == EAGAIN || error == EWOULDBLOCK) return;
  absl::MutexLock lock(&mu);
  if (error == ECONNRESET) {
    EndLocked(absl::UnavailableError(
        absl::StrCat("the peer closed the connection: ", std::strerror(error))));
  } else {
    EndLocked(absl::InternalError(absl::StrCat("recv: ", std::strerror(error))));
  }
}

void FrameConnection::State::FlushQueue() {
  absl::MutexLock lock(&mu);
  while (!ended && !queue.empty()) {
    iovec parts[2 * kMaxFramesPerWrite];
    size_t part_count = 0;
    size_t offered = 0;
    size_t skip = front_written;
    for (auto frame = queue.begin();
         frame != queue.end() && part_count + 2 <= 2 * kMaxFramesPerWrite; ++frame) {
      if (skip < kHeaderBytes) {
        parts[part_count++] = {frame->header + skip, kHeaderBytes - skip};
        offered += kHeaderBytes - skip;
        skip = 0;
      } else {
        skip -= kHeaderBytes;
      }
      if (skip < frame->bytes.size()) {
        parts[part_count++] = {frame->bytes.data() + skip, frame->bytes.size() - skip};
        offered += frame->bytes.size() - skip;
      }
      skip = 0;
    }
    const absl::StatusOr<size_t> written = WriteWithoutWaiting(socket.get(), parts, part_count);
    if (!written.ok()) {
      EndLocked(written.status());
      return;
    }
    pending_bytes -= static_cast<int64_t>(*written);
    size_t left = *written;
    while (left > 0) {
      const size_t front_left = kHeaderBytes + queue.front().bytes.size() - front_written;
      if (left < front_left) {
        front_written += left;
        break;
      }
      left -= front_left;
      queue.pop_front();
      front_written = 0;
    }
    if (*written < offered) return;  // the socket is full: wait for POLLOUT
  }
}

void FrameConnection::State::Run() {
  {
    absl::MutexLock lock(&mu);
    thread_id = std::this_thread::get_id();
  }
  ReceiveBuffer input;
  // The peer's stream has ended (recv returned 0). Reported once the frames
  // before the end are handed over, which waits while reading is off.
  bool peer_closed = false;
  // poll reported POLLHUP or POLLERR while the thread neither read nor
  // wrote. It would report it again at once on every call, so the socket is
  // left out of poll until there is something to read or write, which then
  // meets the end of the stream or the error.
  bool socket_hung_up = false;
  while (true) {
    // Frames already buffered go first: turning reading back on must hand
    // them over even if the socket has nothing new.
    const Delivery delivery = DeliverFrames(&input);
    if (delivery == Delivery::kOwnerGone) return;
    short socket_events = 0;
    {
      absl::MutexLock lock(&mu);
      if (owner_gone) return;
      if (peer_closed && delivery == Delivery::kDrained) EndOnPeerCloseLocked(input);
      if (ended) break;
      if (reading_by == FrameReading::kByThread && reading && !peer_closed) {
        socket_events |= POLLIN;
      }
      if (!queue.empty()) socket_events |= POLLOUT;
    }
    pollfd polled[2] = {{socket.get(), socket_events, 0}, {wakeup.get(), POLLIN, 0}};
    if (socket_events == 0 && socket_hung_up) polled[0].fd = -1;
    if (::poll(polled, 2, -1) < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      absl::MutexLock lock(&mu);
      EndLocked(absl::InternalError(absl::StrCat("poll: ", std::strerror(error))));
      continue;
    }
    if ((polled[1].revents & POLLIN) != 0) {
      uint64_t wakeups;
      const ssize_t ignored = ::read(wakeup.get(), &wakeups, sizeof(wakeups));
      (void)ignored;
    }
    const short revents = polled[0].revents;
    if ((revents & POLLNVAL) != 0) {
      absl::MutexLock lock(&mu);
      EndLocked(absl::InternalError("poll: the socket is not an open descriptor"));
      continue;
    }
    // On POLLHUP or POLLERR, the write or the read reports what happened.
    const short trouble = POLLHUP | POLLERR;
    if ((socket_events & POLLOUT) != 0 && (revents & (POLLOUT | trouble)) != 0) FlushQueue();
    if ((socket_events & POLLIN) != 0 && (revents & (POLLIN | trouble)) != 0) {
      ReadSocket(&input, &peer_closed);
    }
    if (socket_events == 0 && (revents & trouble) != 0) socket_hung_up = true;
  }
  absl::Status why;
  {
    absl::MutexLock lock(&mu);
    if (owner_gone) return;
    why = end_reason;
  }
  handlers.on_closed(why);
}

absl::StatusOr<std::unique_ptr<FrameConnection>> FrameConnection::Start(UniqueFd socket,
                                                                        int64_t max_frame_bytes,
                                                                        FrameHandlers handlers,
                                                                        FrameReading reading) {
  if (!socket.valid()) return absl::InvalidArgumentError("a FrameConnection needs a socket");
  if (max_frame_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_frame_bytes must not be negative; it is ", max_frame_bytes));
  }
  if (!handlers.on_frame || !handlers.on_closed) {
    return absl::InvalidArgumentError("a FrameConnection needs both on_frame and on_closed");
  }
  UniqueFd wakeup(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wakeup.valid()) {
    const int error = errno;
    const std::string message = absl::StrCat("eventfd: ", std::strerror(error));
    if (error == EMFILE || error == ENFILE || error == ENOMEM || error == ENODEV) {
      return absl::ResourceExhaustedError(message);
    }
    return absl::InternalError(message);
  }
  auto state = std::make_shared<State>(std::move(socket), std::move(wakeup), max_frame_bytes,
                                       std::move(handlers), reading);
  try {
    // The thread holds its own reference: it may outlive the FrameConnection.
    state->thread = std::thread([state] { state->Run(); });
  } catch (const std::system_error& error) {
    return absl::ResourceExhaustedError(
        absl::StrCat("starting the connection's thread: ", error.what()));
  }
  return absl::WrapUnique(new FrameConnection(std::move(state)));
}

FrameConnection::~FrameConnection() {
  Close();
  bool on_connection_thread;
  {
    absl::MutexLock lock(&state_->mu);
    on_connection_thread = state_->OnConnectionThreadLocked();
    if (on_connection_thread) state_->owner_gone = true;
  }
  if (on_connection_thread) {
    // Called from a handler: joining would wait for ourselves. The thread
    // returns once the handler does, and the last reference it holds
    // destroys the State.
    state_->thread.detach();
  } else {
    state_->thread.join();
  }
}

absl::Status FrameConnection::Send(std::string frame) {
  if (frame.size() > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a frame holds at most 2^32 - 1 bytes; this one has ", frame.size()));
  }
  State& state = *state_;
  const size_t total = kHeaderBytes + frame.size();
  QueuedFrame queued;
  EncodeHeader(static_cast<uint32_t>(frame.size()), queued.header);
  // Held across the write: frames from concurrent senders must not
  // interleave, and one queued earlier must go first.
  absl::MutexLock lock(&state.mu);
  if (state.ended) return state.EndedErrorLocked();
  size_t written = 0;
  if (state.queue.empty()) {
    // Nothing ahead of this frame: write it from this thread, with no hop
    // to the connection's.
    iovec parts[2] = {{queued.header, kHeaderBytes}, {frame.data(), frame.size()}};
    const absl::StatusOr<size_t> result =
        WriteWithoutWaiting(state.socket.get(), parts, frame.empty() ? 1 : 2);
    if (!result.ok()) {
      state.EndLocked(result.status());
      return state.EndedErrorLocked();
    }
    written = *result;
    if (written == total) return absl::OkStatus();
    state.front_written = written;
    // The thread now waits for room and writes the rest. On the thread
    // itself (from a handler), it looks at the queue before it polls again.
    if (!state.OnConnectionThreadLocked()) state.Wake();
  }
  queued.bytes = std::move(frame);
  state.queue.push_back(std::move(queued));
  state.pending_bytes += static_cast<int64_t>(total - written);
  return absl::OkStatus();
}

void FrameConnection::SetReading(bool on) {
  State& state = *state_;
  absl::MutexLock lock(&state.mu);
  if (state.reading == on) return;
  state.reading = on;
  // The thread may be in poll with the old setting. On the thread itself
  // (from a handler), it looks again before it polls.
  if (!state.OnConnectionThreadLocked()) state.Wake();
}

absl::Status FrameConnection::Receive(const std::function<bool()>& done, absl::Time deadline) {
  State& state = *state_;
  if (state.reading_by != FrameReading::kByCaller) {
    return absl::FailedPreconditionError("this connection's frames are read by its thread");
  }
  while (true) {
    // Counted before `done` is asked: a frame another caller hands over
    // after that (perhaps the one this caller waits for) is seen below,
    // and this caller asks again rather than reading for a frame that has
    // come and gone.
    uint64_t seen;
    {
      absl::MutexLock lock(&state.mu);
      seen = state.frames_handed_over;
    }
    if (done()) return absl::OkStatus();
    {
      absl::MutexLock lock(&state.mu);
      if (state.ended) return state.EndedErrorLocked();
      if (state.frames_handed_over != seen) continue;
      if (state.caller_reading) {
        // Another caller reads, and what it hands over may end this wait.
        auto moved = [&state, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mu) {
          return state.ended || !state.caller_reading || state.frames_handed_over != seen;
        };
        if (!state.mu.AwaitWithDeadline(absl::Condition(&moved), deadline)) {
          return absl::DeadlineExceededError("no frame arrived before the deadline");
        }
        continue;
      }
      state.caller_reading = true;
    }
    const absl::Status read = state.ReadAsCaller(deadline);
    {
      absl::MutexLock lock(&state.mu);
      state.caller_reading = false;
    }
    if (!read.ok()) return read;
  }
}

void FrameConnection::Close() {
  absl::MutexLock lock(&state_->mu);
  state_->EndLocked(absl::CancelledError("the connection was closed"));
}

int64_t FrameConnection::pending_bytes() const {
  absl::MutexLock lock(&state_->mu);
  return state_->pending_bytes;
}

}  // namespace pstrain
