#ifndef PSTRAIN_SERVER_PS_LANE_REGISTRY_H_
#define PSTRAIN_SERVER_PS_LANE_REGISTRY_H_

// The shard's end of shared-memory lanes (parameter_server.proto, OpenLane):
// grants, the Unix socket on which workers hand over their segments, and
// the segments of the lanes open now. Once its segment is handed over, a
// lane's connection carries the worker's PushPull requests and their
// answers (served by a LaneServer); the lane lives as long as that
// connection: a worker that exits or is killed closes it, and the shard
// drops the lane, so nothing outlives the two processes.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/net/shared_segment.h"
#include "common/net/unique_fd.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

struct LaneRegistryOptions {
  // The socket's name in the abstract namespace (unique within the network
  // namespace). Default: "pstrain-ps-<pid>-<random>".
  std::string socket_name;
  // Largest segment a lane may bring. Default 16 GiB: a lane's segment
  // holds what one exchange moves; its pages cost only once touched.
  int64_t max_segment_bytes = int64_t{16} << 30;
  // How long a grant may wait to be presented. Default 10 s.
  absl::Duration grant_ttl = absl::Seconds(10);
  // How long a connection may take to present its grant. Default 5 s.
  absl::Duration hello_timeout = absl::Seconds(5);
  // Lanes open at once; more are refused. Default 4096.
  int max_lanes = 4096;
};

// Serves what workers send on their lanes' connections
// (server/ps/lane_session.h).
class LaneServer {
 public:
  // Serving one connection; destroying it stops serving and closes it.
  class Connection {
   public:
    virtual ~Connection() = default;
  };

  virtual ~LaneServer() = default;

  // Starts serving `socket`, the connection of a lane just opened. The
  // connection calls `ended` once (on any thread) when it has ended and
  // may be destroyed; it is not destroyed from inside `ended`.
  virtual absl::StatusOr<std::unique_ptr<Connection>> Serve(UniqueFd socket,
                                                            std::function<void()> ended) = 0;
};

// Thread-safe. One thread serves the socket.
class LaneRegistry {
 public:
  // Listens on the socket and starts serving it. Unavailable: the host's
  // identity cannot be read; AlreadyExists: the socket name is taken.
  static absl::StatusOr<std::unique_ptr<LaneRegistry>> Start(LaneRegistryOptions options = {});

  // Stops serving and closes every connection. Segments still in use by a
  // pull or push in flight stay mapped until those release them.
  ~LaneRegistry();

  LaneRegistry(const LaneRegistry&) = delete;
  LaneRegistry& operator=(const LaneRegistry&) = delete;

  // Hands lanes opened from now on to `server` (borrowed; it must outlive
  // the registry or a later call). Null: closes every lane's connection
  // and waits until their serving has ended; grants are refused until a
  // server is set again.
  void ServeWith(LaneServer* server);

  // A one-time grant for a worker at `request.host`. FailedPrecondition:
  // another host or network namespace (no socket or segment could be
  // shared), or no server to serve the lane; ResourceExhausted: max_lanes
  // are open.
  absl::StatusOr<OpenLaneResponse> Grant(const OpenLaneRequest& request);

  // The segment of open lane `lane`. NotFound: no such lane is open (never
  // granted, or its worker closed it).
  absl::StatusOr<std::shared_ptr<const SharedSegment>> Find(absl::string_view lane) const;

  int open_lanes() const;
  const std::string& socket_name() const { return options_.socket_name; }

 private:
  struct Connection;

  LaneRegistry(LaneRegistryOptions options, std::string host, UniqueFd listener, UniqueFd wake);

  // The serving thread: accepts connections, takes grants and segments,
  // hands the connections of open lanes to the server, and destroys their
  // serving once they have ended.
  void Serve();
  // Reads a hello from `connection` and opens its lane, or says why not.
  void TakeHello(Connection& connection);
  // Called by a lane's serving once its connection has ended.
  void LaneEnded(const std::string& lane);
  void Wake();

  // Constant after construction.
  const LaneRegistryOptions options_;
  const std::string host_;
  const UniqueFd listener_;
  // An eventfd that ends Serve's poll: at shutdown, or when a lane ended.
  const UniqueFd wake_;

  // Held while a lane is handed to the server, so that ServeWith(nullptr)
  // never returns while a handover is under way.
  absl::Mutex serve_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  LaneServer* server_ ABSL_GUARDED_BY(serve_mu_) = nullptr;

  mutable absl::Mutex mu_;
  // Grants not yet presented, and when they lapse.
  absl::flat_hash_map<std::string, absl::Time> grants_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<const SharedSegment>> lanes_
      ABSL_GUARDED_BY(mu_);
  // The serving of each open lane's connection, and the lanes whose
  // connection has ended (their serving is destroyed by the thread).
  absl::flat_hash_map<std::string, std::unique_ptr<LaneServer::Connection>> served_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::string> ended_ ABSL_GUARDED_BY(mu_);
  bool serving_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::thread thread_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_LANE_REGISTRY_H_
