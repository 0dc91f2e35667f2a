#ifndef PSTRAIN_TESTS_TCP_FAULT_PROXY_H_
#define PSTRAIN_TESTS_TCP_FAULT_PROXY_H_

// A TCP proxy on loopback that can damage the streams through it, for
// fault tests: put it between a process and the peers that dial it (the
// process advertises the proxy's address) and the faults are those of a
// real network: every connection reset at once, or every byte held back.

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace pstrain {
namespace testing_net {

struct RelayedConnection;

class TcpFaultProxy {
 public:
  // Listens on a free loopback port; connections wait in the backlog until
  // Forward names where they go.
  static absl::StatusOr<std::unique_ptr<TcpFaultProxy>> Start();
  // Closes every connection and stops.
  ~TcpFaultProxy();

  TcpFaultProxy(const TcpFaultProxy&) = delete;
  TcpFaultProxy& operator=(const TcpFaultProxy&) = delete;

  // "127.0.0.1:<port>": what peers dial.
  std::string address() const;

  // Starts taking connections, each relayed to `target` (host:port, an IPv4
  // address). Call once.
  absl::Status Forward(const std::string& target);

  // Resets every open connection (both ends see ECONNRESET), as a broken
  // network path would; new connections are relayed as before. Returns how
  // many were reset.
  int ResetConnections();

  // Holds each chunk read from either side for `delay` before passing it
  // on; zero passes at once. Applies from the next chunk on.
  void SetDelay(absl::Duration delay);

  // Chunks passed on after a delay, since the start.
  int64_t delayed_chunks() const;

 private:
  TcpFaultProxy(int listener, int port);

  void AcceptLoop();
  // Copies one direction of `connection` until its sender ends or the
  // connection is cut.
  void Pump(std::shared_ptr<RelayedConnection> connection, bool to_server);

  const int listener_;
  const int port_;
  std::string target_host_;
  int target_port_ = 0;
  std::thread acceptor_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration delay_ ABSL_GUARDED_BY(mu_);
  int64_t delayed_chunks_ ABSL_GUARDED_BY(mu_) = 0;
  // Every relayed connection not yet cut or ended.
  std::vector<std::shared_ptr<RelayedConnection>> connections_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> pumps_ ABSL_GUARDED_BY(mu_);
};

}  // namespace testing_net
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_TCP_FAULT_PROXY_H_
