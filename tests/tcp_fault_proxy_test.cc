#include "tests/tcp_fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace testing_net {
namespace {

// Echoes whatever each connection sends, until the test ends.
class EchoServer {
 public:
  EchoServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::listen(listener_, 16), 0);
    EXPECT_EQ(::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length), 0);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) return;  // the listener was shut down
        std::thread([fd] {
          char buffer[4096];
          for (ssize_t got; (got = ::read(fd, buffer, sizeof(buffer))) > 0;) {
            if (::send(fd, buffer, got, MSG_NOSIGNAL) != got) break;
          }
          ::close(fd);
        }).detach();
      }
    });
  }
  ~EchoServer() {
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

int Dial(const std::string& address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(address.find(':') + 1))));
  ::inet_pton(AF_INET, "127.0.0.1", &target.sin_addr);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof(target)), 0);
  return fd;
}

// Sends `text` and reads as many bytes back.
std::string RoundTrip(int fd, const std::string& text) {
  EXPECT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
  std::string back(text.size(), '\0');
  size_t got = 0;
  while (got < back.size()) {
    const ssize_t n = ::read(fd, &back[got], back.size() - got);
    if (n <= 0) break;
    got += n;
  }
  back.resize(got);
  return back;
}

TEST(TcpFaultProxyTest, RelaysBothWays) {
  EchoServer echo;
  absl::StatusOr<std::unique_ptr<TcpFaultProxy>> proxy = TcpFaultProxy::Start();
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  ASSERT_TRUE((*proxy)->Forward(echo.address()).ok());
  const int fd = Dial((*proxy)->address());
  EXPECT_EQ(RoundTrip(fd, "hello"), "hello");
  const std::string big(1 << 20, 'x');
  EXPECT_EQ(RoundTrip(fd, big), big);
  EXPECT_EQ((*proxy)->delayed_chunks(), 0);
  ::close(fd);
}

TEST(TcpFaultProxyTest, AResetBreaksOpenConnectionsAndNewOnesWork) {
  EchoServer echo;
  absl::StatusOr<std::unique_ptr<TcpFaultProxy>> proxy = TcpFaultProxy::Start();
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  ASSERT_TRUE((*proxy)->Forward(echo.address()).ok());
  const int fd = Dial((*proxy)->address());
  ASSERT_EQ(RoundTrip(fd, "before"), "before");
  EXPECT_EQ((*proxy)->ResetConnections(), 1);
  char byte;
  errno = 0;
  EXPECT_EQ(::read(fd, &byte, 1), -1);
  EXPECT_EQ(errno, ECONNRESET);
  ::close(fd);
  const int again = Dial((*proxy)->address());
  EXPECT_EQ(RoundTrip(again, "after"), "after");
  ::close(again);
}

TEST(TcpFaultProxyTest, ADelayHoldsEachChunkBack) {
  EchoServer echo;
  absl::StatusOr<std::unique_ptr<TcpFaultProxy>> proxy = TcpFaultProxy::Start();
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  ASSERT_TRUE((*proxy)->Forward(echo.address()).ok());
  (*proxy)->SetDelay(absl::Milliseconds(100));
  const int fd = Dial((*proxy)->address());
  const absl::Time start = absl::Now();
  EXPECT_EQ(RoundTrip(fd, "slow"), "slow");
  // Held on the way there and on the way back: a lower bound, which a
  // loaded machine cannot break.
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
  EXPECT_EQ((*proxy)->delayed_chunks(), 2);
  (*proxy)->SetDelay(absl::ZeroDuration());
  EXPECT_EQ(RoundTrip(fd, "fast"), "fast");
  EXPECT_EQ((*proxy)->delayed_chunks(), 2);
  ::close(fd);
}

TEST(TcpFaultProxyTest, RefusesATargetItCannotDial) {
  absl::StatusOr<std::unique_ptr<TcpFaultProxy>> proxy = TcpFaultProxy::Start();
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  EXPECT_EQ((*proxy)->Forward("localhost:80").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*proxy)->Forward("nonsense").code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace testing_net
}  // namespace pstrain
