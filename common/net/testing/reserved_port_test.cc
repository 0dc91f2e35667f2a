#include "common/net/testing/reserved_port.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "common/net/unique_fd.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace testing_net {
namespace {

UniqueFd Socket(bool reuse_address) {
  UniqueFd socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int on = 1;
  if (reuse_address) ::setsockopt(socket.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  return socket;
}

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  return address;
}

int Bind(const UniqueFd& socket, int port) {
  sockaddr_in address = Loopback(port);
  if (::bind(socket.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return errno;
  }
  return 0;
}

int BoundPort(const UniqueFd& socket) {
  sockaddr_in address{};
  socklen_t length = sizeof(address);
  ::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&address), &length);
  return ntohs(address.sin_port);
}

TEST(ReservedPortTest, AListenerThatReusesAddressesTakesItAndServes) {
  absl::StatusOr<ReservedPort> reserved = ReservedPort::OnLoopback();
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  ASSERT_GT(reserved->port(), 0);
  const UniqueFd listener = Socket(/*reuse_address=*/true);
  ASSERT_EQ(Bind(listener, reserved->port()), 0);
  ASSERT_EQ(::listen(listener.get(), 1), 0);
  const UniqueFd client = Socket(/*reuse_address=*/false);
  sockaddr_in address = Loopback(reserved->port());
  EXPECT_EQ(::connect(client.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
}

TEST(ReservedPortTest, NoOtherSocketIsGivenIt) {
  absl::StatusOr<ReservedPort> reserved = ReservedPort::OnLoopback();
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  // Not by asking for it without SO_REUSEADDR...
  EXPECT_EQ(Bind(Socket(/*reuse_address=*/false), reserved->port()), EADDRINUSE);
  // ...nor as a port the kernel picks.
  for (int i = 0; i < 1000; ++i) {
    const UniqueFd any = Socket(/*reuse_address=*/true);
    ASSERT_EQ(Bind(any, 0), 0);
    ASSERT_NE(BoundPort(any), reserved->port());
  }
}

}  // namespace
}  // namespace testing_net
}  // namespace pstrain
