#include "common/net/unix_socket.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMaxBytes = 1 << 20;

// Abstract names are shared by every process in the network namespace, so
// each test takes a name no concurrent test run can hold. The pid alone is
// not enough: Bazel's sandbox gives each test process its own PID namespace
// but not its own network namespace, so parallel runs share pids.
std::string UniqueName() {
  static const uint64_t run = absl::Uniform<uint64_t>(absl::BitGen());
  static std::atomic<int> counter{0};
  return absl::StrCat("pstrain-unix-socket-test-", ::getpid(), "-", absl::Hex(run), "-", counter++);
}

absl::Time SoonDeadline() { return absl::Now() + absl::Seconds(10); }

// A connected pair through a listener, as two processes would have it.
struct Connection {
  UniqueFd listener;
  UniqueFd client;
  UniqueFd server;
};

Connection Connect() {
  Connection connection;
  const std::string name = UniqueName();
  absl::StatusOr<UniqueFd> listener = ListenOnAbstractSocket(name, 4);
  EXPECT_TRUE(listener.ok()) << listener.status();
  if (!listener.ok()) return connection;
  connection.listener = std::move(*listener);
  absl::StatusOr<UniqueFd> client = ConnectToAbstractSocket(name);
  EXPECT_TRUE(client.ok()) << client.status();
  if (!client.ok()) return connection;
  connection.client = std::move(*client);
  absl::StatusOr<UniqueFd> server = AcceptConnection(connection.listener.get());
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return connection;
  connection.server = std::move(*server);
  return connection;
}

UniqueFd NewMemfd() {
  UniqueFd fd(::memfd_create("unix_socket_test", MFD_CLOEXEC));
  EXPECT_TRUE(fd.valid()) << std::strerror(errno);
  return fd;
}

TEST(UnixSocketTest, FrameCarriesBytesAndADescriptorOfTheSameFile) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  UniqueFd memfd = NewMemfd();
  ASSERT_EQ(::pwrite(memfd.get(), "shared", 6, 0), 6);

  ASSERT_TRUE(SendFrame(connection.client.get(), "tensor header", memfd.get()).ok());
  absl::StatusOr<ReceivedFrame> frame =
      ReceiveFrame(connection.server.get(), kMaxBytes, SoonDeadline());
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->bytes, "tensor header");
  ASSERT_TRUE(frame->fd.valid());
  EXPECT_NE(frame->fd.get(), memfd.get());
  EXPECT_EQ(::fcntl(frame->fd.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);

  struct stat sent_info, received_info;
  ASSERT_EQ(::fstat(memfd.get(), &sent_info), 0);
  ASSERT_EQ(::fstat(frame->fd.get(), &received_info), 0);
  EXPECT_EQ(sent_info.st_dev, received_info.st_dev);
  EXPECT_EQ(sent_info.st_ino, received_info.st_ino);
  char read_back[6];
  ASSERT_EQ(::pread(frame->fd.get(), read_back, 6, 0), 6);
  EXPECT_EQ(std::string(read_back, 6), "shared");
}

TEST(UnixSocketTest, EachDescriptorStaysWithItsOwnFrame) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  UniqueFd first = NewMemfd();
  UniqueFd second = NewMemfd();
  // Sent back to back, so all of it is in the receive buffer at once.
  ASSERT_TRUE(SendFrame(connection.client.get(), "one", first.get()).ok());
  ASSERT_TRUE(SendFrame(connection.client.get(), "no descriptor").ok());
  ASSERT_TRUE(SendFrame(connection.client.get(), "", second.get()).ok());

  struct stat first_info, second_info, received_info;
  ASSERT_EQ(::fstat(first.get(), &first_info), 0);
  ASSERT_EQ(::fstat(second.get(), &second_info), 0);

  absl::StatusOr<ReceivedFrame> frame =
      ReceiveFrame(connection.server.get(), kMaxBytes, SoonDeadline());
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->bytes, "one");
  ASSERT_TRUE(frame->fd.valid());
  ASSERT_EQ(::fstat(frame->fd.get(), &received_info), 0);
  EXPECT_EQ(received_info.st_ino, first_info.st_ino);

  frame = ReceiveFrame(connection.server.get(), kMaxBytes, SoonDeadline());
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->bytes, "no descriptor");
  EXPECT_FALSE(frame->fd.valid());

  frame = ReceiveFrame(connection.server.get(), kMaxBytes, SoonDeadline());
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->bytes, "");
  ASSERT_TRUE(frame->fd.valid());
  ASSERT_EQ(::fstat(frame->fd.get(), &received_info), 0);
  EXPECT_EQ(received_info.st_ino, second_info.st_ino);
}

TEST(UnixSocketTest, FrameLargerThanTheSocketBufferArrivesWhole) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  std::string large(4 << 20, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 7);

  absl::Status sent;
  std::thread sender([&] { sent = SendFrame(connection.client.get(), large); });
  absl::StatusOr<ReceivedFrame> frame =
      ReceiveFrame(connection.server.get(), large.size(), SoonDeadline());
  sender.join();
  ASSERT_TRUE(sent.ok()) << sent;
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_TRUE(frame->bytes == large);
}

TEST(UnixSocketTest, FrameOverTheLimitIsRefused) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  ASSERT_TRUE(SendFrame(connection.client.get(), std::string(101, 'x')).ok());

  absl::StatusOr<ReceivedFrame> frame = ReceiveFrame(connection.server.get(), 100, SoonDeadline());
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(frame.status().message(), HasSubstr("101"));
  EXPECT_THAT(frame.status().message(), HasSubstr("100"));
}

TEST(UnixSocketTest, MoreThanOneDescriptorIsRefused) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  UniqueFd first = NewMemfd();
  UniqueFd second = NewMemfd();
  // A peer that does not use SendFrame: an empty frame with two descriptors.
  char header[4] = {0, 0, 0, 0};
  iovec part = {header, sizeof(header)};
  union {
    cmsghdr align;
    char bytes[CMSG_SPACE(2 * sizeof(int))];
  } control;
  std::memset(&control, 0, sizeof(control));
  msghdr message = {};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control.bytes;
  message.msg_controllen = sizeof(control.bytes);
  cmsghdr* attached = CMSG_FIRSTHDR(&message);
  attached->cmsg_level = SOL_SOCKET;
  attached->cmsg_type = SCM_RIGHTS;
  attached->cmsg_len = CMSG_LEN(2 * sizeof(int));
  const int fds[2] = {first.get(), second.get()};
  std::memcpy(CMSG_DATA(attached), fds, sizeof(fds));
  ASSERT_EQ(::sendmsg(connection.client.get(), &message, MSG_NOSIGNAL), 4) << std::strerror(errno);

  // Descriptors this process holds before and after must match: the refused
  // ones are closed, not leaked.
  const int probe_before = ::dup(connection.listener.get());
  ASSERT_GE(probe_before, 0);
  ::close(probe_before);
  absl::StatusOr<ReceivedFrame> frame =
      ReceiveFrame(connection.server.get(), kMaxBytes, SoonDeadline());
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument);
  const int probe_after = ::dup(connection.listener.get());
  ::close(probe_after);
  EXPECT_EQ(probe_after, probe_before);
}

TEST(UnixSocketTest, DeadlinePassesWhenNothingIsSent) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  const absl::Time start = absl::Now();
  absl::StatusOr<ReceivedFrame> frame =
      ReceiveFrame(connection.server.get(), kMaxBytes, start + absl::Milliseconds(50));
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(50));

  frame = ReceiveFrame(connection.server.get(), kMaxBytes, absl::InfinitePast());
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(UnixSocketTest, FrameAlreadyThereIsReceivedAfterTheDeadline) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  ASSERT_TRUE(SendFrame(connection.client.get(), "waiting").ok());
  absl::StatusOr<ReceivedFrame> frame =
      ReceiveFrame(connection.server.get(), kMaxBytes, absl::InfinitePast());
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->bytes, "waiting");
}

TEST(UnixSocketTest, PeerClosingIsUnavailable) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  connection.client.reset();
  absl::StatusOr<ReceivedFrame> frame =
      ReceiveFrame(connection.server.get(), kMaxBytes, SoonDeadline());
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(frame.status().message(), HasSubstr("the peer closed the socket"));
}

TEST(UnixSocketTest, PeerClosingInTheMiddleOfAFrameIsUnavailable) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  // A header promising 10 bytes, then only 3.
  const char partial[] = {10, 0, 0, 0, 'a', 'b', 'c'};
  ASSERT_EQ(::send(connection.client.get(), partial, sizeof(partial), MSG_NOSIGNAL),
            static_cast<ssize_t>(sizeof(partial)));
  connection.client.reset();
  absl::StatusOr<ReceivedFrame> frame =
      ReceiveFrame(connection.server.get(), kMaxBytes, SoonDeadline());
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kUnavailable);
}

TEST(UnixSocketTest, SendingToAClosedPeerIsUnavailableNotSigpipe) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  connection.server.reset();
  absl::Status sent = SendFrame(connection.client.get(), "anyone there?");
  EXPECT_EQ(sent.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(sent.message(), HasSubstr("the peer closed the socket"));
}

TEST(UnixSocketTest, ConnectingWhereNobodyListensIsUnavailable) {
  const std::string name = UniqueName();
  absl::StatusOr<UniqueFd> client = ConnectToAbstractSocket(name);
  EXPECT_EQ(client.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(client.status().message(), HasSubstr(name));
}

TEST(UnixSocketTest, NameIsFreedWhenTheListenerCloses) {
  const std::string name = UniqueName();
  absl::StatusOr<UniqueFd> listener = ListenOnAbstractSocket(name, 4);
  ASSERT_TRUE(listener.ok()) << listener.status();
  listener->reset();
  EXPECT_EQ(ConnectToAbstractSocket(name).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(ListenOnAbstractSocket(name, 4).ok());
}

TEST(UnixSocketTest, SecondListenerOnTheSameNameFails) {
  const std::string name = UniqueName();
  absl::StatusOr<UniqueFd> first = ListenOnAbstractSocket(name, 4);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<UniqueFd> second = ListenOnAbstractSocket(name, 4);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(second.status().message(), HasSubstr(name));
}

TEST(UnixSocketTest, NamesMustHoldOneTo107Bytes) {
  EXPECT_EQ(ListenOnAbstractSocket("", 4).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ListenOnAbstractSocket(std::string(108, 'n'), 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConnectToAbstractSocket(std::string(108, 'n')).status().code(),
            absl::StatusCode::kInvalidArgument);

  // The longest name works both ways.
  const std::string prefix = UniqueName();
  const std::string longest = prefix + std::string(107 - prefix.size(), 'n');
  absl::StatusOr<UniqueFd> listener = ListenOnAbstractSocket(longest, 4);
  ASSERT_TRUE(listener.ok()) << listener.status();
  EXPECT_TRUE(ConnectToAbstractSocket(longest).ok());
}

TEST(UnixSocketTest, PeerCredentialsNameThisProcess) {
  Connection connection = Connect();
  ASSERT_TRUE(connection.server.valid());
  for (int socket : {connection.server.get(), connection.client.get()}) {
    absl::StatusOr<PeerCredentials> peer = PeerCredentialsOf(socket);
    ASSERT_TRUE(peer.ok()) << peer.status();
    EXPECT_EQ(peer->pid, ::getpid());
    EXPECT_EQ(peer->uid, ::getuid());
    EXPECT_EQ(peer->gid, ::getgid());
  }
}

TEST(UnixSocketTest, PeerCredentialsOfANonSocketFail) {
  UniqueFd memfd = NewMemfd();
  EXPECT_FALSE(PeerCredentialsOf(memfd.get()).ok());
}

}  // namespace
}  // namespace pstrain
