#include "tests/tcp_fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/net/host_port.h"

namespace pstrain {
namespace testing_net {
namespace {

// How often a pump blocked on a quiet socket looks whether its connection
// was cut.
constexpr int kPollMillis = 50;

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

// The two sockets of one relayed connection. The last of its two pumps to
// finish closes them; a cut one is closed with SO_LINGER 0, so the peers
// get a reset rather than an orderly end.
struct RelayedConnection {
  int client = -1;
  int server = -1;
  std::atomic<bool> cut{false};
  std::atomic<int> pumps_running{2};
};

absl::StatusOr<std::unique_ptr<TcpFaultProxy>> TcpFaultProxy::Start() {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Errno("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listener, 128) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    absl::Status failed = Errno("bind/listen on 127.0.0.1:0");
    ::close(listener);
    return failed;
  }
  return std::unique_ptr<TcpFaultProxy>(new TcpFaultProxy(listener, ntohs(address.sin_port)));
}

TcpFaultProxy::TcpFaultProxy(int listener, int port) : listener_(listener), port_(port) {}

TcpFaultProxy::~TcpFaultProxy() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  ResetConnections();
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> pumps;
  {
    absl::MutexLock lock(&mu_);
    pumps.swap(pumps_);
  }
  for (std::thread& pump : pumps) pump.join();
  ::close(listener_);
}

std::string TcpFaultProxy::address() const { return absl::StrCat("127.0.0.1:", port_); }

absl::Status TcpFaultProxy::Forward(const std::string& target) {
  absl::StatusOr<HostPort> parsed = ParseHostPort(target);
  if (!parsed.ok()) return parsed.status();
  in_addr host{};
  if (::inet_pton(AF_INET, parsed->host.c_str(), &host) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the proxy forwards to IPv4 addresses only, not '", target, "'"));
  }
  if (acceptor_.joinable()) return absl::FailedPreconditionError("the proxy already forwards");
  target_host_ = parsed->host;
  target_port_ = parsed->port;
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

int TcpFaultProxy::ResetConnections() {
  absl::MutexLock lock(&mu_);
  for (const std::shared_ptr<RelayedConnection>& connection : connections_) {
    connection->cut = true;
  }
  const int reset = static_cast<int>(connections_.size());
  connections_.clear();
  return reset;
}

void TcpFaultProxy::SetDelay(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  delay_ = delay;
}

int64_t TcpFaultProxy::delayed_chunks() const {
  absl::MutexLock lock(&mu_);
  return delayed_chunks_;
}

void TcpFaultProxy::AcceptLoop() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    pollfd waiting{listener_, POLLIN, 0};
    if (::poll(&waiting, 1, kPollMillis) <= 0) continue;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_port = htons(static_cast<uint16_t>(target_port_));
    ::inet_pton(AF_INET, target_host_.c_str(), &target.sin_addr);
    if (server < 0 ||
        ::connect(server, reinterpret_cast<sockaddr*>(&target), sizeof(target)) != 0) {
      // The target is down (a restarting process): the client sees its
      // connection closed and dials again.
      if (server >= 0) ::close(server);
      ::close(client);
      continue;
    }
    const int no_delay = 1;
    ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &no_delay, sizeof(no_delay));
    ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &no_delay, sizeof(no_delay));
    auto connection = std::make_shared<RelayedConnection>();
    connection->client = client;
    connection->server = server;
    absl::MutexLock lock(&mu_);
    connections_.push_back(connection);
    pumps_.emplace_back([this, connection] { Pump(connection, /*to_server=*/true); });
    pumps_.emplace_back([this, connection] { Pump(connection, /*to_server=*/false); });
  }
}

void TcpFaultProxy::Pump(std::shared_ptr<RelayedConnection> connection, bool to_server) {
  const int from = to_server ? connection->client : connection->server;
  const int to = to_server ? connection->server : connection->client;
  std::vector<char> buffer(1 << 16);
  while (!connection->cut) {
    pollfd readable{from, POLLIN, 0};
    const int ready = ::poll(&readable, 1, kPollMillis);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t got = ::read(from, buffer.data(), buffer.size());
    if (got <= 0) {
      // An orderly end (or an error) on one side ends the other's writes.
      ::shutdown(to, SHUT_WR);
      break;
    }
    absl::Duration delay;
    {
      absl::MutexLock lock(&mu_);
      delay = delay_;
      if (delay > absl::ZeroDuration()) ++delayed_chunks_;
    }
    if (delay > absl::ZeroDuration()) absl::SleepFor(delay);
    ssize_t sent = 0;
    while (sent < got && !connection->cut) {
      const ssize_t wrote = ::send(to, buffer.data() + sent, got - sent, MSG_NOSIGNAL);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) break;
      sent += wrote;
    }
    if (sent < got && !connection->cut) break;
  }
  // The other direction may still run; the last one closes both.
  if (connection->pumps_running.fetch_sub(1) != 1) return;
  if (connection->cut) {
    const linger reset{1, 0};
    ::setsockopt(connection->client, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    ::setsockopt(connection->server, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  }
  ::close(connection->client);
  ::close(connection->server);
  absl::MutexLock lock(&mu_);
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    if (*it == connection) {
      connections_.erase(it);
      break;
    }
  }
}

}  // namespace testing_net
}  // namespace pstrain
