#ifndef PSTRAIN_COMMON_NET_TESTING_RESERVED_PORT_H_
#define PSTRAIN_COMMON_NET_TESTING_RESERVED_PORT_H_

#include <utility>

#include "absl/status/statusor.h"
#include "common/net/unique_fd.h"

namespace pstrain {
namespace testing_net {

// A loopback TCP port set aside for a process a test starts later and
// tells the number (a daemon's listen address, Prometheus'
// --web.listen-address). The port stays bound here, with SO_REUSEADDR and
// not listening, as long as this object lives: the kernel hands it to no
// other socket meanwhile (neither to a bind to port 0 nor to an outgoing
// connection), yet a listener that sets SO_REUSEADDR binds it, as gRPC
// servers, prometheus-cpp's exposer and Go's net package all do. Keep it
// until that process listens. Until something listens on it, a connection
// to it is refused: a shard that is certainly unreachable, which a port
// freed by a server that shut down is not (another test's server or an
// outgoing connection may take it meanwhile). Movable; not thread-safe.
class ReservedPort {
 public:
  // Unavailable: no loopback port could be bound.
  static absl::StatusOr<ReservedPort> OnLoopback();

  int port() const { return port_; }

 private:
  ReservedPort(UniqueFd socket, int port) : socket_(std::move(socket)), port_(port) {}

  UniqueFd socket_;
  int port_;
};

}  // namespace testing_net
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_TESTING_RESERVED_PORT_H_
