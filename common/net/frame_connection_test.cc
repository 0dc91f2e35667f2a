#include "common/net/frame_connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/net/unique_fd.h"
#include "common/net/unix_socket.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMaxFrameBytes = 16 << 20;
// How long a test waits for something that must happen: a bug fails the
// test instead of hanging it.
constexpr absl::Duration kPatience = absl::Seconds(10);
// How long a test watches for something that must not happen.
constexpr absl::Duration kQuietPeriod = absl::Milliseconds(100);

struct SocketPair {
  UniqueFd near;
  UniqueFd far;
};

SocketPair NewSocketPair() {
  int fds[2] = {-1, -1};
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0) << std::strerror(errno);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// More bytes than the socket `fd` and its peer can hold between them plus
// one read of the receiving connection (256 KiB), whatever the host's
// buffer sizes: a sender of this many to a peer that does not read must
// queue some of them.
size_t MoreThanTheSocketHolds(int fd) {
  int send_buffer = 0;
  socklen_t size = sizeof(send_buffer);
  EXPECT_EQ(::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_buffer, &size), 0)
      << std::strerror(errno);
  return std::max<size_t>(2 << 20, 4 * static_cast<size_t>(send_buffer) + (1 << 20));
}

// `size` bytes that depend on `seed` and on their position, so a frame cut,
// merged with another or delivered out of order does not compare equal.
std::string Pattern(size_t size, uint32_t seed) {
  std::string bytes(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1664525u + 1013904223u;
    bytes[i] = static_cast<char>(x >> 24);
  }
  return bytes;
}

// The wire form of `frame`, as common/net/unix_socket.h defines it.
std::string Encoded(const std::string& frame) {
  const uint32_t length = static_cast<uint32_t>(frame.size());
  std::string bytes = {static_cast<char>(length & 0xff), static_cast<char>((length >> 8) & 0xff),
                       static_cast<char>((length >> 16) & 0xff),
                       static_cast<char>((length >> 24) & 0xff)};
  return bytes + frame;
}

void WriteAll(int fd, const std::string& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t count = ::write(fd, bytes.data() + written, bytes.size() - written);
    ASSERT_GT(count, 0) << std::strerror(errno);
    written += static_cast<size_t>(count);
  }
}

// Compares frame lists without printing megabytes when they differ.
::testing::AssertionResult SameFrames(const std::vector<std::string>& got,
                                      const std::vector<std::string>& want) {
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (got[i] != want[i]) {
      return ::testing::AssertionFailure() << "frame " << i << " differs: " << got[i].size()
                                           << " bytes, expected " << want[i].size();
    }
  }
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure()
           << got.size() << " frames arrived, expected " << want.size();
  }
  return ::testing::AssertionSuccess();
}

// Waits until `condition` holds, for conditions nothing notifies.
bool Eventually(const std::function<bool()>& condition) {
  const absl::Time deadline = absl::Now() + kPatience;
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

// Collects what a connection hands over, for the test thread to wait on.
class Recorder {
 public:
  // `also` runs after each frame is recorded (on the connection's thread).
  FrameHandlers Handlers(std::function<void(const std::string&)> also = nullptr) {
    FrameHandlers handlers;
    handlers.on_frame = [this, also](std::string frame) {
      {
        absl::MutexLock lock(&mu_);
        frames_.push_back(frame);
      }
      if (also) also(frame);
    };
    handlers.on_closed = [this](const absl::Status& why) {
      absl::MutexLock lock(&mu_);
      ++closed_count_;
      why_ = why;
    };
    return handlers;
  }

  // The frames so far, once there are `count` of them or the patience ran out.
  std::vector<std::string> WaitForFrames(size_t count) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return frames_.size() >= count; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), kPatience);
    return frames_;
  }

  // Frame `index` (from 0), once it has arrived; "<none>" if it did not.
  std::string WaitForFrame(size_t index) {
    absl::MutexLock lock(&mu_);
    auto arrived = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return frames_.size() > index; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&arrived), kPatience)) return "<none>";
    return frames_[index];
  }

  // Why the connection ended, once on_closed has run.
  absl::Status WaitForClosed() {
    absl::MutexLock lock(&mu_);
    auto closed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return closed_count_ > 0; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&closed), kPatience)) {
      return absl::DeadlineExceededError("test: on_closed did not run");
    }
    return why_;
  }

  std::vector<std::string> frames() {
    absl::MutexLock lock(&mu_);
    return frames_;
  }
  size_t frame_count() {
    absl::MutexLock lock(&mu_);
    return frames_.size();
  }
  int closed_count() {
    absl::MutexLock lock(&mu_);
    return closed_count_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> frames_ ABSL_GUARDED_BY(mu_);
  int closed_count_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status why_ ABSL_GUARDED_BY(mu_);
};

// Lets a handler reach its own connection, which it may run before Start
// returns.
class ConnectionSlot {
 public:
  void Set(std::unique_ptr<FrameConnection> connection) {
    absl::MutexLock lock(&mu_);
    connection_ = std::move(connection);
  }
  FrameConnection* Get() {
    absl::MutexLock lock(&mu_);
    return connection_.get();
  }
  std::unique_ptr<FrameConnection> Take() {
    absl::MutexLock lock(&mu_);
    return std::move(connection_);
  }

 private:
  absl::Mutex mu_;
  std::unique_ptr<FrameConnection> connection_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<FrameConnection> StartOrDie(UniqueFd socket, FrameHandlers handlers,
                                            int64_t max_frame_bytes = kMaxFrameBytes,
                                            FrameReading reading = FrameReading::kByThread) {
  absl::StatusOr<std::unique_ptr<FrameConnection>> connection =
      FrameConnection::Start(std::move(socket), max_frame_bytes, std::move(handlers), reading);
  EXPECT_TRUE(connection.ok()) << connection.status();
  return connection.ok() ? std::move(*connection) : nullptr;
}

// Starts a connection on `socket` into `slot` whose handler records every
// frame and turns reading off at a frame "pause".
void StartPausingOnPause(UniqueFd socket, Recorder& recorder, ConnectionSlot& slot) {
  slot.Set(StartOrDie(std::move(socket), recorder.Handlers([&slot](const std::string& frame) {
    if (frame == "pause") slot.Get()->SetReading(false);
  })));
}

// Many small frames of varied sizes (some empty), with a few of several
// MiB, far more than a socket buffer holds, among them.
std::vector<std::string> MixedFrames(uint32_t seed) {
  std::vector<std::string> frames;
  for (uint32_t i = 0; i < 1500; ++i) {
    size_t size = (i * 37) % 301;
    if (i == 300) size = (3 << 20) + 13;
    if (i == 800) size = (5 << 20) + 1;
    if (i == 1300) size = 7 << 20;
    frames.push_back(Pattern(size, seed * 100000 + i));
  }
  return frames;
}

TEST(FrameConnectionTest, FramesFlowBothWaysInOrder) {
  SocketPair pair = NewSocketPair();
  Recorder at_near, at_far;
  std::unique_ptr<FrameConnection> near = StartOrDie(std::move(pair.near), at_near.Handlers());
  std::unique_ptr<FrameConnection> far = StartOrDie(std::move(pair.far), at_far.Handlers());
  ASSERT_NE(near, nullptr);
  ASSERT_NE(far, nullptr);
  const std::vector<std::string> near_to_far = MixedFrames(1);
  const std::vector<std::string> far_to_near = MixedFrames(2);

  // Both ends send at once, so each one's thread must keep reading while
  // its own long frames wait for room.
  std::thread far_sender([&] {
    for (const std::string& frame : far_to_near) EXPECT_TRUE(far->Send(frame).ok());
  });
  for (const std::string& frame : near_to_far) ASSERT_TRUE(near->Send(frame).ok());
  far_sender.join();

  EXPECT_TRUE(SameFrames(at_far.WaitForFrames(near_to_far.size()), near_to_far));
  EXPECT_TRUE(SameFrames(at_near.WaitForFrames(far_to_near.size()), far_to_near));
  EXPECT_EQ(at_near.closed_count(), 0);
  EXPECT_EQ(at_far.closed_count(), 0);
}

TEST(FrameConnectionTest, LongFrameWaitsInTheQueueUntilThePeerReads) {
  SocketPair pair = NewSocketPair();
  Recorder recorder;
  std::unique_ptr<FrameConnection> connection =
      StartOrDie(std::move(pair.near), recorder.Handlers());
  ASSERT_NE(connection, nullptr);
  const std::string long_frame = Pattern(MoreThanTheSocketHolds(pair.far.get()), 7);

  ASSERT_TRUE(connection->Send(long_frame).ok());
  // Nobody reads the far end: the socket took what its buffer holds and
  // the rest waits.
  const int64_t queued = connection->pending_bytes();
  EXPECT_GT(queued, 0);
  EXPECT_LE(queued, static_cast<int64_t>(long_frame.size()) + 4);
  // A frame sent now goes behind it, not into the socket ahead of it.
  ASSERT_TRUE(connection->Send("behind").ok());
  EXPECT_EQ(connection->pending_bytes(), queued + 4 + 6);

  // The far end speaks plain common/net/unix_socket.h.
  absl::StatusOr<ReceivedFrame> received =
      ReceiveFrame(pair.far.get(), kMaxFrameBytes, absl::Now() + kPatience);
  ASSERT_TRUE(received.ok()) << received.status();
  EXPECT_TRUE(received->bytes == long_frame) << received->bytes.size() << " bytes";
  received = ReceiveFrame(pair.far.get(), kMaxFrameBytes, absl::Now() + kPatience);
  ASSERT_TRUE(received.ok()) << received.status();
  EXPECT_EQ(received->bytes, "behind");
  EXPECT_TRUE(Eventually([&] { return connection->pending_bytes() == 0; }));

  ASSERT_TRUE(SendFrame(pair.far.get(), "reply").ok());
  EXPECT_EQ(recorder.WaitForFrames(1), std::vector<std::string>{"reply"});
}

TEST(FrameConnectionTest, EmptyFramesArrive) {
  SocketPair pair = NewSocketPair();
  Recorder recorder;
  std::unique_ptr<FrameConnection> connection =
      StartOrDie(std::move(pair.near), recorder.Handlers());
  ASSERT_NE(connection, nullptr);

  ASSERT_TRUE(connection->Send("").ok());
  ASSERT_TRUE(connection->Send("x").ok());
  for (const std::string expected : {"", "x"}) {
    absl::StatusOr<ReceivedFrame> received =
        ReceiveFrame(pair.far.get(), kMaxFrameBytes, absl::Now() + kPatience);
    ASSERT_TRUE(received.ok()) << received.status();
    EXPECT_EQ(received->bytes, expected);
  }

  ASSERT_TRUE(SendFrame(pair.far.get(), "").ok());
  ASSERT_TRUE(SendFrame(pair.far.get(), "y").ok());
  EXPECT_EQ(recorder.WaitForFrames(2), (std::vector<std::string>{"", "y"}));
}

TEST(FrameConnectionTest, ReadingTurnedOffInAHandlerHoldsBackBufferedFrames) {
  SocketPair pair = NewSocketPair();
  Recorder recorder;
  ConnectionSlot slot;
  StartPausingOnPause(std::move(pair.near), recorder, slot);
  ASSERT_NE(slot.Get(), nullptr);

  // One write: the connection reads all of it at once, so the frames after
  // each "pause" wait in its buffer, not in the socket.
  WriteAll(pair.far.get(),
           Encoded("1") + Encoded("pause") + Encoded("2") + Encoded("pause") + Encoded("3"));
  EXPECT_EQ(recorder.WaitForFrames(2), (std::vector<std::string>{"1", "pause"}));
  absl::SleepFor(kQuietPeriod);
  EXPECT_EQ(recorder.frames().size(), 2u);

  // The socket has nothing new: the buffered frame must come anyway.
  slot.Get()->SetReading(true);
  EXPECT_EQ(recorder.WaitForFrames(4), (std::vector<std::string>{"1", "pause", "2", "pause"}));

  // Off again: a frame sent now stays in the socket.
  ASSERT_TRUE(SendFrame(pair.far.get(), "4").ok());
  absl::SleepFor(kQuietPeriod);
  EXPECT_EQ(recorder.frames().size(), 4u);

  slot.Get()->SetReading(true);
  EXPECT_EQ(recorder.WaitForFrames(6),
            (std::vector<std::string>{"1", "pause", "2", "pause", "3", "4"}));
  EXPECT_EQ(recorder.closed_count(), 0);
}

TEST(FrameConnectionTest, PausedReceiverMakesTheSenderQueue) {
  SocketPair pair = NewSocketPair();
  const size_t frame_count = MoreThanTheSocketHolds(pair.near.get()) / (64 << 10) + 1;
  Recorder at_sender, at_receiver;
  ConnectionSlot receiver;
  StartPausingOnPause(std::move(pair.far), at_receiver, receiver);
  std::unique_ptr<FrameConnection> sender = StartOrDie(std::move(pair.near), at_sender.Handlers());
  ASSERT_NE(receiver.Get(), nullptr);
  ASSERT_NE(sender, nullptr);

  std::vector<std::string> sent = {"pause"};
  for (size_t i = 0; i < frame_count; ++i) {
    sent.push_back(Pattern(64 << 10, static_cast<uint32_t>(i)));
  }
  for (const std::string& frame : sent) ASSERT_TRUE(sender->Send(frame).ok());
  // More than the receiver's one read before the pause plus the socket
  // buffer: some of it waits at the sender.
  EXPECT_GT(sender->pending_bytes(), 0);
  EXPECT_EQ(at_receiver.WaitForFrames(1), std::vector<std::string>{"pause"});
  absl::SleepFor(kQuietPeriod);
  EXPECT_EQ(at_receiver.frames().size(), 1u);
  EXPECT_GT(sender->pending_bytes(), 0);

  // Turned back on from another thread than the connection's.
  receiver.Get()->SetReading(true);
  EXPECT_TRUE(SameFrames(at_receiver.WaitForFrames(sent.size()), sent));
  EXPECT_TRUE(Eventually([&] { return sender->pending_bytes() == 0; }));
}

TEST(FrameConnectionTest, PeerCloseEndsTheConnectionWithUnavailable) {
  SocketPair pair = NewSocketPair();
  Recorder recorder;
  std::unique_ptr<FrameConnection> connection =
      StartOrDie(std::move(pair.near), recorder.Handlers());
  ASSERT_NE(connection, nullptr);

  ASSERT_TRUE(SendFrame(pair.far.get(), "last words").ok());
  pair.far.reset();
  const absl::Status why = recorder.WaitForClosed();
  EXPECT_TRUE(absl::IsUnavailable(why)) << why;
  EXPECT_THAT(why.message(), HasSubstr("peer closed"));
  EXPECT_EQ(recorder.frames(), std::vector<std::string>{"last words"});

  const absl::Status sent = connection->Send("anyone there?");
  EXPECT_TRUE(absl::IsUnavailable(sent)) << sent;
  EXPECT_EQ(connection->pending_bytes(), 0);
  connection.reset();
  EXPECT_EQ(recorder.closed_count(), 1);
}

TEST(FrameConnectionTest, PeerCloseWhileReadingIsOffWaitsForTheFramesBeforeIt) {
  SocketPair pair = NewSocketPair();
  Recorder recorder;
  ConnectionSlot slot;
  StartPausingOnPause(std::move(pair.near), recorder, slot);
  ASSERT_NE(slot.Get(), nullptr);

  ASSERT_TRUE(SendFrame(pair.far.get(), "pause").ok());
  EXPECT_EQ(recorder.WaitForFrames(1), std::vector<std::string>{"pause"});
  ASSERT_TRUE(SendFrame(pair.far.get(), "after").ok());
  pair.far.reset();
  absl::SleepFor(kQuietPeriod);
  EXPECT_EQ(recorder.closed_count(), 0);

  slot.Get()->SetReading(true);
  const absl::Status why = recorder.WaitForClosed();
  EXPECT_TRUE(absl::IsUnavailable(why)) << why;
  EXPECT_EQ(recorder.frames(), (std::vector<std::string>{"pause", "after"}));
}

TEST(FrameConnectionTest, CloseReportsCancelledOnce) {
  SocketPair pair = NewSocketPair();
  Recorder at_near, at_far;
  std::unique_ptr<FrameConnection> near = StartOrDie(std::move(pair.near), at_near.Handlers());
  std::unique_ptr<FrameConnection> far = StartOrDie(std::move(pair.far), at_far.Handlers());
  ASSERT_NE(near, nullptr);
  ASSERT_NE(far, nullptr);

  near->Close();
  const absl::Status why = at_near.WaitForClosed();
  EXPECT_TRUE(absl::IsCancelled(why)) << why;
  near->Close();
  // The peer sees the end at once, not when the descriptor is closed.
  const absl::Status far_why = at_far.WaitForClosed();
  EXPECT_TRUE(absl::IsUnavailable(far_why)) << far_why;

  const absl::Status sent = near->Send("too late");
  EXPECT_TRUE(absl::IsUnavailable(sent)) << sent;
  near.reset();
  EXPECT_EQ(at_near.closed_count(), 1);
}

TEST(FrameConnectionTest, FrameOverTheLimitEndsTheConnectionNamingBothLengths) {
  SocketPair pair = NewSocketPair();
  Recorder recorder;
  std::unique_ptr<FrameConnection> connection =
      StartOrDie(std::move(pair.near), recorder.Handlers(), /*max_frame_bytes=*/1024);
  ASSERT_NE(connection, nullptr);

  ASSERT_TRUE(SendFrame(pair.far.get(), std::string(1024, 'k')).ok());
  // A header announcing 1,000,000 bytes (0x000f4240), and a few of them.
  WriteAll(pair.far.get(), std::string("\x40\x42\x0f\x00", 4) + "abc");
  const absl::Status why = recorder.WaitForClosed();
  EXPECT_TRUE(absl::IsInvalidArgument(why)) << why;
  EXPECT_THAT(why.message(), HasSubstr("1000000"));
  EXPECT_THAT(why.message(), HasSubstr("1024"));
  EXPECT_EQ(recorder.frames(), std::vector<std::string>{std::string(1024, 'k')});

  // The peer is told: its next read meets the end of the stream.
  absl::StatusOr<ReceivedFrame> received =
      ReceiveFrame(pair.far.get(), kMaxFrameBytes, absl::Now() + kPatience);
  EXPECT_TRUE(absl::IsUnavailable(received.status())) << received.status();
}

TEST(FrameConnectionTest, DestroyedFromItsOwnFrameHandler) {
  for (int round = 0; round < 25; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    SocketPair pair = NewSocketPair();
    ConnectionSlot slot;
    std::atomic<int> frames{0};
    std::atomic<int> closes{0};
    absl::Notification destroyed;
    // Held by the handlers only: expires when the thread has let go of them.
    auto token = std::make_shared<int>(0);
    std::weak_ptr<int> handlers_alive = token;
    FrameHandlers handlers;
    handlers.on_frame = [&, token](std::string) {
      ++frames;
      std::unique_ptr<FrameConnection> doomed = slot.Take();
      doomed.reset();
      if (!destroyed.HasBeenNotified()) destroyed.Notify();
    };
    handlers.on_closed = [&, token](const absl::Status&) { ++closes; };
    token.reset();
    slot.Set(StartOrDie(std::move(pair.near), std::move(handlers)));
    ASSERT_NE(slot.Get(), nullptr);

    WriteAll(pair.far.get(), Encoded("first") + Encoded("second") + Encoded("third"));
    ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(kPatience));
    // The thread ends: it releases the handlers, and the socket reads as
    // closed at the far end.
    EXPECT_TRUE(Eventually([&] { return handlers_alive.expired(); }));
    absl::StatusOr<ReceivedFrame> received =
        ReceiveFrame(pair.far.get(), kMaxFrameBytes, absl::Now() + kPatience);
    EXPECT_TRUE(absl::IsUnavailable(received.status())) << received.status();
    EXPECT_EQ(frames.load(), 1);
    EXPECT_EQ(closes.load(), 0);
  }
}

TEST(FrameConnectionTest, DestroyedFromItsOwnClosedHandler) {
  SocketPair pair = NewSocketPair();
  ConnectionSlot slot;
  std::atomic<int> closes{0};
  absl::Notification destroyed;
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> handlers_alive = token;
  FrameHandlers handlers;
  handlers.on_frame = [token](std::string) {};
  handlers.on_closed = [&, token](const absl::Status&) {
    ++closes;
    slot.Take().reset();
    destroyed.Notify();
  };
  token.reset();
  slot.Set(StartOrDie(std::move(pair.near), std::move(handlers)));
  ASSERT_NE(slot.Get(), nullptr);

  pair.far.reset();
  ASSERT_TRUE(destroyed.WaitForNotificationWithTimeout(kPatience));
  EXPECT_TRUE(Eventually([&] { return handlers_alive.expired(); }));
  EXPECT_EQ(closes.load(), 1);
}

TEST(FrameConnectionTest, NoHandlerRunsAfterTheDestructorReturns) {
  SocketPair pair = NewSocketPair();
  Recorder at_sender, at_receiver;
  std::unique_ptr<FrameConnection> sender = StartOrDie(std::move(pair.near), at_sender.Handlers());
  std::unique_ptr<FrameConnection> receiver =
      StartOrDie(std::move(pair.far), at_receiver.Handlers());
  ASSERT_NE(sender, nullptr);
  ASSERT_NE(receiver, nullptr);

  // Sends until the receiver's end closes the connection.
  std::thread sending([&] {
    for (uint32_t i = 0; i < 10'000'000 && sender->Send(Pattern(100, i)).ok(); ++i) {
    }
  });
  at_receiver.WaitForFrames(100);
  receiver.reset();  // while frames keep arriving
  const size_t frames_at_destruction = at_receiver.frames().size();
  EXPECT_GE(frames_at_destruction, 100u);
  EXPECT_EQ(at_receiver.closed_count(), 1);
  const absl::Status why = at_receiver.WaitForClosed();
  EXPECT_TRUE(absl::IsCancelled(why)) << why;
  sending.join();
  absl::SleepFor(kQuietPeriod);
  EXPECT_EQ(at_receiver.frames().size(), frames_at_destruction);
  EXPECT_EQ(at_receiver.closed_count(), 1);
  EXPECT_TRUE(absl::IsUnavailable(at_sender.WaitForClosed()));
}

TEST(FrameConnectionTest, ConcurrentSendersNeverInterleave) {
  constexpr int kSenders = 4;
  constexpr int kFramesEach = 400;
  SocketPair pair = NewSocketPair();
  Recorder at_sender, at_receiver;
  std::unique_ptr<FrameConnection> sender = StartOrDie(std::move(pair.near), at_sender.Handlers());
  std::unique_ptr<FrameConnection> receiver =
      StartOrDie(std::move(pair.far), at_receiver.Handlers());
  ASSERT_NE(sender, nullptr);
  ASSERT_NE(receiver, nullptr);

  // "sender:index:" then a body; every 50th is 200 KiB, so the queue fills
  // while the other senders keep adding to it.
  auto body = [](int who, int index) {
    const size_t size = index % 50 == 0 ? 200 << 10 : (index * 13) % 500;
    return Pattern(size, static_cast<uint32_t>(who * 1000 + index));
  };
  std::vector<std::thread> senders;
  for (int who = 0; who < kSenders; ++who) {
    senders.emplace_back([&, who] {
      for (int index = 0; index < kFramesEach; ++index) {
        EXPECT_TRUE(sender->Send(absl::StrCat(who, ":", index, ":", body(who, index))).ok());
      }
    });
  }
  for (std::thread& thread : senders) thread.join();

  const std::vector<std::string> frames = at_receiver.WaitForFrames(kSenders * kFramesEach);
  ASSERT_EQ(frames.size(), static_cast<size_t>(kSenders * kFramesEach));
  int next[kSenders] = {};
  for (size_t i = 0; i < frames.size(); ++i) {
    std::vector<absl::string_view> parts = absl::StrSplit(frames[i], absl::MaxSplits(':', 2));
    ASSERT_EQ(parts.size(), 3u) << "frame " << i;
    int who, index;
    ASSERT_TRUE(absl::SimpleAtoi(parts[0], &who) && who >= 0 && who < kSenders) << "frame " << i;
    ASSERT_TRUE(absl::SimpleAtoi(parts[1], &index)) << "frame " << i;
    ASSERT_EQ(index, next[who]) << "frame " << i << " from sender " << who;
    ASSERT_TRUE(parts[2] == body(who, index)) << "frame " << i << " cut or mixed";
    ++next[who];
  }
}

TEST(FrameConnectionTest, HandlerAnswersFromTheConnectionThread) {
  SocketPair pair = NewSocketPair();
  Recorder at_client, at_server;
  ConnectionSlot server;
  server.Set(StartOrDie(std::move(pair.far), at_server.Handlers([&](const std::string& frame) {
    EXPECT_TRUE(server.Get()->Send(absl::StrCat("echo ", frame)).ok());
  })));
  std::unique_ptr<FrameConnection> client = StartOrDie(std::move(pair.near), at_client.Handlers());
  ASSERT_NE(server.Get(), nullptr);
  ASSERT_NE(client, nullptr);

  // One doorbell at a time, as a training step rings it.
  constexpr int kRoundTrips = 2000;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kRoundTrips; ++i) {
    ASSERT_TRUE(client->Send(absl::StrCat(i)).ok());
    ASSERT_EQ(at_client.WaitForFrame(i), absl::StrCat("echo ", i));
  }
  std::cout << "round trip: " << absl::ToDoubleMicroseconds((absl::Now() - start) / kRoundTrips)
            << " us\n";
}

// A connection whose frames its callers read (kByCaller).
std::unique_ptr<FrameConnection> StartReadByCaller(UniqueFd socket, FrameHandlers handlers,
                                                   int64_t max_frame_bytes = kMaxFrameBytes) {
  return StartOrDie(std::move(socket), std::move(handlers), max_frame_bytes,
                    FrameReading::kByCaller);
}

// A connection its callers read (near) and its peer, read by its thread
// (far), each recording what it hands over.
struct CallerReadPair {
  CallerReadPair() {
    SocketPair pair = NewSocketPair();
    near = StartReadByCaller(std::move(pair.near), at_near.Handlers());
    far = StartOrDie(std::move(pair.far), at_far.Handlers());
  }

  Recorder at_near, at_far;
  std::unique_ptr<FrameConnection> near, far;
};

// A `done` for Receive: `recorder` holds at least `count` frames.
std::function<bool()> HasFrames(Recorder& recorder, size_t count) {
  return [&recorder, count] { return recorder.frame_count() >= count; };
}

TEST(FrameConnectionTest, CallerReadsFramesOnItsOwnThreadAndOnlyWhileItReceives) {
  SocketPair pair = NewSocketPair();
  Recorder at_near, at_far;
  std::thread::id handed_over_on;
  std::unique_ptr<FrameConnection> near = StartReadByCaller(
      std::move(pair.near),
      at_near.Handlers([&](const std::string&) { handed_over_on = std::this_thread::get_id(); }));
  std::unique_ptr<FrameConnection> far = StartOrDie(std::move(pair.far), at_far.Handlers());
  ASSERT_NE(near, nullptr);
  ASSERT_NE(far, nullptr);
  const std::vector<std::string> frames = MixedFrames(3);
  std::thread far_sender([&] {
    for (const std::string& frame : frames) EXPECT_TRUE(far->Send(frame).ok());
  });

  // Nobody receives yet: nothing is read.
  absl::SleepFor(kQuietPeriod);
  EXPECT_TRUE(at_near.frames().empty());

  // Sending works without a reader, both ways.
  ASSERT_TRUE(near->Send("hello").ok());
  EXPECT_EQ(at_far.WaitForFrame(0), "hello");

  ASSERT_TRUE(near->Receive(HasFrames(at_near, frames.size()), absl::Now() + kPatience).ok());
  far_sender.join();
  EXPECT_TRUE(SameFrames(at_near.frames(), frames));
  EXPECT_EQ(handed_over_on, std::this_thread::get_id());
  EXPECT_EQ(at_near.closed_count(), 0);
}

TEST(FrameConnectionTest, ReceiveEndsAtTheDeadlineAndTheConnectionGoesOn) {
  CallerReadPair pair;
  ASSERT_NE(pair.near, nullptr);
  ASSERT_NE(pair.far, nullptr);

  const absl::Time deadline = absl::Now() + absl::Milliseconds(50);
  EXPECT_TRUE(absl::IsDeadlineExceeded(pair.near->Receive(HasFrames(pair.at_near, 1), deadline)));
  EXPECT_GE(absl::Now(), deadline);

  ASSERT_TRUE(pair.far->Send("late").ok());
  ASSERT_TRUE(pair.near->Receive(HasFrames(pair.at_near, 1), absl::Now() + kPatience).ok());
  EXPECT_EQ(pair.at_near.frames(), std::vector<std::string>{"late"});
}

TEST(FrameConnectionTest, ConcurrentCallersEachSeeTheFrameTheyWaitFor) {
  CallerReadPair pair;
  ASSERT_NE(pair.near, nullptr);
  ASSERT_NE(pair.far, nullptr);
  auto arrived = [&pair](const std::string& wanted) {
    return [&pair, wanted] {
      const std::vector<std::string> frames = pair.at_near.frames();
      return std::find(frames.begin(), frames.end(), wanted) != frames.end();
    };
  };

  // Four callers wait at once; whichever reads hands every frame over, and
  // each returns once its own has come, in whatever order they are sent.
  constexpr int kCallers = 4;
  std::vector<std::thread> callers;
  std::atomic<int> received{0};
  for (int who = 0; who < kCallers; ++who) {
    callers.emplace_back([&, who] {
      const absl::Status status =
          pair.near->Receive(arrived(absl::StrCat("for ", who)), absl::Now() + kPatience);
      EXPECT_TRUE(status.ok()) << "caller " << who << ": " << status;
      ++received;
    });
  }
  for (int who = kCallers - 1; who >= 0; --who) {
    absl::SleepFor(absl::Milliseconds(10));
    ASSERT_TRUE(pair.far->Send(absl::StrCat("for ", who)).ok());
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(received.load(), kCallers);
  EXPECT_EQ(pair.at_near.frames().size(), static_cast<size_t>(kCallers));
}

TEST(FrameConnectionTest, CallerHandsOverTheFramesBeforeThePeersCloseThenEnds) {
  CallerReadPair pair;
  ASSERT_NE(pair.near, nullptr);
  ASSERT_NE(pair.far, nullptr);
  ASSERT_TRUE(pair.far->Send("first").ok());
  ASSERT_TRUE(pair.far->Send("second").ok());
  pair.far.reset();

  const absl::Status status = pair.near->Receive([] { return false; }, absl::Now() + kPatience);
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_EQ(pair.at_near.frames(), (std::vector<std::string>{"first", "second"}));
  const absl::Status why = pair.at_near.WaitForClosed();
  EXPECT_TRUE(absl::IsUnavailable(why)) << why;
  EXPECT_THAT(why.message(), HasSubstr("the peer closed the connection"));
  EXPECT_TRUE(
      absl::IsUnavailable(pair.near->Receive(HasFrames(pair.at_near, 3), absl::Now() + kPatience)));
}

TEST(FrameConnectionTest, CloseEndsAWaitingCaller) {
  SocketPair pair = NewSocketPair();
  Recorder at_near;
  std::unique_ptr<FrameConnection> near =
      StartReadByCaller(std::move(pair.near), at_near.Handlers());
  ASSERT_NE(near, nullptr);
  absl::Status status;
  std::thread caller(
      [&] { status = near->Receive([] { return false; }, absl::Now() + kPatience); });
  absl::SleepFor(kQuietPeriod);
  const absl::Time closed_at = absl::Now();
  near->Close();
  caller.join();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_LT(absl::Now() - closed_at, kPatience / 2);
  EXPECT_TRUE(absl::IsCancelled(at_near.WaitForClosed()));
}

TEST(FrameConnectionTest, ACallerWhoseFrameIsHandedOverJustAfterItAskedReturns) {
  // Caller y finds its frame missing; before it takes its turn to read,
  // caller x reads y's frame with its own and hands it over. Nothing more
  // comes for y to read: it must see that a frame was handed over since it
  // asked, and ask again.
  SocketPair pair = NewSocketPair();
  std::atomic<int> x_frames{0}, y_frames{0};
  FrameHandlers handlers;
  handlers.on_frame = [&](std::string frame) { ++(frame == "x" ? x_frames : y_frames); };
  handlers.on_closed = [](const absl::Status&) {};
  std::unique_ptr<FrameConnection> near = StartReadByCaller(std::move(pair.near), handlers);
  ASSERT_NE(near, nullptr);

  absl::Notification y_asked, x_returned;
  absl::Status y_status;
  absl::Time y_returned;
  std::thread y([&] {
    bool first = true;
    y_status = near->Receive(
        [&] {
          const bool arrived = y_frames.load() > 0;
          if (first) {
            // The answer as it stood, given once x has handed the frame over.
            first = false;
            y_asked.Notify();
            x_returned.WaitForNotificationWithTimeout(kPatience);
          }
          return arrived;
        },
        absl::Now() + kPatience);
    y_returned = absl::Now();
  });
  ASSERT_TRUE(y_asked.WaitForNotificationWithTimeout(kPatience));
  WriteAll(pair.far.get(), Encoded("x") + Encoded("y"));
  const absl::Status x_status =
      near->Receive([&] { return x_frames.load() > 0; }, absl::Now() + kPatience);
  const absl::Time x_back = absl::Now();
  x_returned.Notify();
  y.join();
  EXPECT_TRUE(x_status.ok()) << x_status;
  // Not read for until the deadline, which would also end with the frame
  // there.
  EXPECT_TRUE(y_status.ok()) << y_status;
  EXPECT_LT(y_returned - x_back, kPatience / 2) << "y read for a frame that had come already";
  EXPECT_EQ(y_frames.load(), 1);
}

TEST(FrameConnectionTest, CallerMeetsAFrameOverTheLimit) {
  SocketPair pair = NewSocketPair();
  Recorder at_near;
  std::unique_ptr<FrameConnection> near =
      StartReadByCaller(std::move(pair.near), at_near.Handlers(), /*max_frame_bytes=*/8);
  ASSERT_NE(near, nullptr);
  WriteAll(pair.far.get(), Encoded("short") + Encoded("much too long"));

  EXPECT_TRUE(absl::IsUnavailable(near->Receive([] { return false; }, absl::Now() + kPatience)));
  EXPECT_EQ(at_near.frames(), std::vector<std::string>{"short"});
  const absl::Status why = at_near.WaitForClosed();
  EXPECT_TRUE(absl::IsInvalidArgument(why)) << why;
  EXPECT_THAT(why.message(), HasSubstr("13 bytes"));
}

TEST(FrameConnectionTest, ReceiveIsRefusedWhenTheThreadReads) {
  SocketPair pair = NewSocketPair();
  Recorder recorder;
  std::unique_ptr<FrameConnection> near = StartOrDie(std::move(pair.near), recorder.Handlers());
  ASSERT_NE(near, nullptr);
  EXPECT_TRUE(absl::IsFailedPrecondition(near->Receive([] { return false; }, absl::Now())));
}

TEST(FrameConnectionTest, CallerReadsItsAnswers) {
  SocketPair pair = NewSocketPair();
  Recorder at_client, at_server;
  ConnectionSlot server;
  server.Set(StartOrDie(std::move(pair.far), at_server.Handlers([&](const std::string& frame) {
    EXPECT_TRUE(server.Get()->Send(absl::StrCat("echo ", frame)).ok());
  })));
  std::unique_ptr<FrameConnection> client =
      StartReadByCaller(std::move(pair.near), at_client.Handlers());
  ASSERT_NE(server.Get(), nullptr);
  ASSERT_NE(client, nullptr);

  // As HandlerAnswersFromTheConnectionThread, with the client woken by the
  // socket rather than by its connection's thread.
  constexpr int kRoundTrips = 2000;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kRoundTrips; ++i) {
    ASSERT_TRUE(client->Send(absl::StrCat(i)).ok());
    ASSERT_TRUE(client->Receive(HasFrames(at_client, i + 1), absl::Now() + kPatience).ok());
    ASSERT_EQ(at_client.WaitForFrame(i), absl::StrCat("echo ", i));
  }
  std::cout << "round trip, the caller reading: "
            << absl::ToDoubleMicroseconds((absl::Now() - start) / kRoundTrips) << " us\n";
}

TEST(FrameConnectionTest, StartRejectsWhatCannotWork) {
  Recorder recorder;
  EXPECT_TRUE(absl::IsInvalidArgument(
      FrameConnection::Start(UniqueFd(), kMaxFrameBytes, recorder.Handlers()).status()));
  SocketPair pair = NewSocketPair();
  EXPECT_TRUE(absl::IsInvalidArgument(
      FrameConnection::Start(std::move(pair.near), -1, recorder.Handlers()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      FrameConnection::Start(std::move(pair.far), kMaxFrameBytes, FrameHandlers()).status()));
}

}  // namespace
}  // namespace pstrain
