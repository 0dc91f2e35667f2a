#ifndef PSTRAIN_COMMON_NET_FRAME_CONNECTION_H_
#define PSTRAIN_COMMON_NET_FRAME_CONNECTION_H_

// A connected Unix stream socket carrying frames both ways (the format of
// common/net/unix_socket.h: a 4-byte little-endian length, then the bytes),
// served by one thread of its own. Senders write from their own thread
// when the socket has room, so a request costs a system call and no thread
// hop; only what the socket cannot take at once is left to the
// connection's thread. Frames are read by that thread and handed over as
// they arrive (a server's side), or read by a caller waiting for its
// answer on its own thread (a client's side), which is then woken by the
// socket itself rather than by the connection's thread: one wakeup less
// for each answer.
//
// This is the doorbell of a shared-memory lane: the frames are small
// control messages, the bulk of the bytes lies in the lane's segment.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/net/unique_fd.h"

namespace pstrain {

// Who reads the frames that arrive.
enum class FrameReading {
  // The connection's thread, as they arrive.
  kByThread,
  // Callers of FrameConnection::Receive, on their own threads, while they
  // wait; nobody reads while nobody waits.
  kByCaller,
};

struct FrameHandlers {
  // A whole frame has arrived. Runs one frame at a time, in order: on the
  // connection's thread (kByThread), only while reading is on
  // (SetReading), or on the thread of a caller of Receive (kByCaller). May
  // run before Start has returned: a handler that uses the FrameConnection
  // must get it through something the caller sets after Start returns.
  std::function<void(std::string frame)> on_frame;
  // The connection has ended: the peer closed it (Unavailable), a frame was
  // too long (InvalidArgument), a read or a write failed (Unavailable, or
  // Internal for an unexpected error), or Close was called (Cancelled).
  // Runs once, on the connection's thread, after the last on_frame (with
  // kByCaller, a Receive may still be handing over a frame it had read
  // when the connection ended); nothing runs after. Does not run if the
  // FrameConnection is destroyed from a handler first.
  std::function<void(const absl::Status& why)> on_closed;
};

// Thread-safe.
class FrameConnection {
 public:
  // Takes `socket` (connected, blocking or not) and starts the thread;
  // with kByThread, it reads from the start. Frames longer than
  // `max_frame_bytes` end the connection (InvalidArgument, naming both
  // lengths).
  //
  // InvalidArgument: `socket` is not valid, `max_frame_bytes` is negative,
  //   or a handler is missing.
  // ResourceExhausted: no eventfd or thread could be had.
  // Internal: eventfd failed otherwise.
  static absl::StatusOr<std::unique_ptr<FrameConnection>> Start(
      UniqueFd socket, int64_t max_frame_bytes, FrameHandlers handlers,
      FrameReading reading = FrameReading::kByThread);

  // Closes the connection and waits for its thread, unless called on that
  // thread (from a handler): then the thread ends by itself once the
  // handler returns, and no handler runs after this destructor.
  ~FrameConnection();

  FrameConnection(const FrameConnection&) = delete;
  FrameConnection& operator=(const FrameConnection&) = delete;

  // Queues `frame` to be sent after every frame sent before it, writing
  // what the socket takes at once from the calling thread; never blocks on
  // a slow peer. May be called from a handler.
  //
  // Unavailable: the connection has ended, or ends now because the write
  //   failed (the frame is not sent).
  // InvalidArgument: `frame` is 4 GiB or longer.
  absl::Status Send(std::string frame);

  // Turns reading by the connection's thread (kByThread) on or off; with
  // kByCaller it changes nothing. While off, frames stay in the socket (and the
  // peer's sends eventually wait): the receiver's flow control. What the
  // thread had read already (at most one read: 256 KiB, or the rest of a
  // longer frame) waits in its buffer and is handed over first when reading
  // is back on. Takes effect
  // before the next on_frame. If the peer closes the connection while
  // reading is off, on_closed waits until reading is back on and the frames
  // sent before the close are handed over (a Send that meets the closed
  // socket ends the connection at once).
  void SetReading(bool on);

  // With kByCaller: reads frames on this thread and hands each to on_frame
  // here until `done` returns true (asked before each read, and after
  // every frame anyone hands over). One caller reads at a time; the others
  // wait for frames it hands over (which may end their wait) or for their
  // turn. `done` must not call into this connection. Never called by a
  // handler.
  //
  // Only a reader finds that the peer closed its end: with nobody in
  // Receive, a connection ends then by the next Send or Receive.
  //
  // OK: `done` returned true.
  // DeadlineExceeded: `deadline` passed first; the connection goes on.
  // Unavailable: the connection has ended (on_closed follows, or has run).
  // FailedPrecondition: the connection reads by its thread (kByThread).
  absl::Status Receive(const std::function<bool()>& done, absl::Time deadline);

  // Ends the connection: on_closed follows with Cancelled, unless it has
  // ended already; the peer sees the end of the stream. Frames queued and
  // not yet written are dropped, and so are frames received and not yet
  // handed over. Idempotent.
  void Close();

  // Bytes (headers included) queued by Send and not yet written to the
  // socket; 0 once the connection has ended.
  int64_t pending_bytes() const;

 private:
  struct State;
  explicit FrameConnection(std::shared_ptr<State> state) : state_(std::move(state)) {}

  // Shared with the thread, which may outlive this object when it is
  // destroyed from a handler.
  const std::shared_ptr<State> state_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_FRAME_CONNECTION_H_
