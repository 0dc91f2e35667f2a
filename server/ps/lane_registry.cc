#include "server/ps/lane_registry.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/net/host_identity.h"
#include "common/net/unix_socket.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

constexpr int kGrantBytes = 16;
// A hello is a grant; anything much longer is not one.
constexpr int64_t kMaxHelloBytes = 256;

absl::StatusOr<std::string> RandomBytes(int n) {
  std::string bytes(n, '\0');
  int got = 0;
  while (got < n) {
    const ssize_t r = getrandom(bytes.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      return absl::UnavailableError(absl::StrCat("getrandom: ", std::strerror(errno)));
    }
    got += static_cast<int>(r);
  }
  return bytes;
}

}  // namespace

struct LaneRegistry::Connection {
  UniqueFd fd;
  absl::Time hello_deadline;
  // The lane it holds open; empty until its hello was taken.
  std::string lane;
};

absl::StatusOr<std::unique_ptr<LaneRegistry>> LaneRegistry::Start(LaneRegistryOptions options) {
  absl::StatusOr<std::string> host = LocalHostIdentity();
  if (!host.ok()) return host.status();
  if (options.socket_name.empty()) {
    absl::StatusOr<std::string> suffix = RandomBytes(8);
    if (!suffix.ok()) return suffix.status();
    options.socket_name =
        absl::StrCat("pstrain-ps-", getpid(), "-", absl::BytesToHexString(*suffix));
  }
  absl::StatusOr<UniqueFd> listener = ListenOnAbstractSocket(options.socket_name, 64);
  if (!listener.ok()) return listener.status();
  UniqueFd wake(eventfd(0, EFD_CLOEXEC));
  if (!wake.valid()) {
    return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  }
  std::unique_ptr<LaneRegistry> registry(new LaneRegistry(std::move(options), *std::move(host),
                                                          *std::move(listener), std::move(wake)));
  registry->thread_ = std::thread([r = registry.get()] { r->Serve(); });
  return registry;
}

LaneRegistry::LaneRegistry(LaneRegistryOptions options, std::string host, UniqueFd listener,
                           UniqueFd wake)
    : options_(std::move(options)),
      host_(std::move(host)),
      listener_(std::move(listener)),
      wake_(std::move(wake)) {}

LaneRegistry::~LaneRegistry() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  const uint64_t one = 1;
  if (write(wake_.get(), &one, sizeof(one)) != sizeof(one)) {
    PLOG(ERROR) << "cannot wake the lane socket's thread";
  }
  thread_.join();
}

absl::StatusOr<OpenLaneResponse> LaneRegistry::Grant(const OpenLaneRequest& request) {
  if (request.host() != host_) {
    return absl::FailedPreconditionError(
        absl::StrCat("the worker runs on another host or in another network namespace (worker \"",
                     request.host(), "\", shard \"", host_, "\")"));
  }
  absl::StatusOr<std::string> grant = RandomBytes(kGrantBytes);
  if (!grant.ok()) return grant.status();
  absl::MutexLock l(&mu_);
  if (static_cast<int>(lanes_.size() + grants_.size()) >= options_.max_lanes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("this shard has ", options_.max_lanes, " lanes open or granted"));
  }
  grants_[*grant] = absl::Now() + options_.grant_ttl;
  OpenLaneResponse response;
  response.set_socket(options_.socket_name);
  response.set_grant(*std::move(grant));
  return response;
}

absl::StatusOr<std::shared_ptr<const SharedSegment>> LaneRegistry::Find(
    absl::string_view lane) const {
  absl::MutexLock l(&mu_);
  auto it = lanes_.find(lane);
  if (it == lanes_.end()) {
    return absl::NotFoundError("no such shared-memory lane is open on this shard");
  }
  return it->second;
}

int LaneRegistry::open_lanes() const {
  absl::MutexLock l(&mu_);
  return static_cast<int>(lanes_.size());
}

void LaneRegistry::DropLane(const std::string& lane) {
  absl::MutexLock l(&mu_);
  lanes_.erase(lane);
}

bool LaneRegistry::TakeHello(Connection& connection) {
  absl::StatusOr<ReceivedFrame> hello =
      ReceiveFrame(connection.fd.get(), kMaxHelloBytes, absl::Now() + absl::Seconds(1));
  if (!hello.ok()) {
    LOG(WARNING) << "lane socket " << options_.socket_name
                 << ": a connection closed without a hello: " << hello.status();
    return false;
  }
  auto refuse = [&](const std::string& why) {
    LOG(WARNING) << "lane socket " << options_.socket_name << ": refused a lane: " << why;
    SendFrame(connection.fd.get(), why).IgnoreError();
    return false;
  };
  bool granted = false;
  {
    absl::MutexLock l(&mu_);
    // A grant is good once, presented or not.
    auto it = grants_.find(hello->bytes);
    if (it != grants_.end()) {
      granted = absl::Now() <= it->second;
      grants_.erase(it);
    }
  }
  if (!granted) return refuse("the grant is unknown, used or lapsed");
  if (!hello->fd.valid()) return refuse("the hello carried no segment");
  absl::StatusOr<std::unique_ptr<SharedSegment>> segment =
      SharedSegment::Adopt(hello->fd.release(), options_.max_segment_bytes);
  if (!segment.ok()) return refuse(segment.status().ToString());
  {
    absl::MutexLock l(&mu_);
    lanes_[hello->bytes] = std::shared_ptr<const SharedSegment>(*std::move(segment));
  }
  if (absl::Status s = SendFrame(connection.fd.get(), ""); !s.ok()) {
    DropLane(hello->bytes);
    return false;
  }
  connection.lane = std::move(hello->bytes);
  return true;
}

void LaneRegistry::Serve() {
  std::vector<std::unique_ptr<Connection>> connections;
  std::vector<pollfd> fds;
  while (true) {
    fds.assign({{wake_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}});
    for (const auto& c : connections) fds.push_back({c->fd.get(), POLLIN, 0});
    // The timeout lets lapsed hellos and grants go when nothing happens.
    if (poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) {
      PLOG(ERROR) << "lane socket " << options_.socket_name << ": poll";
    }
    {
      absl::MutexLock l(&mu_);
      if (stopping_) break;
    }
    const absl::Time now = absl::Now();
    std::vector<std::unique_ptr<Connection>> kept;
    for (size_t i = 0; i < connections.size(); ++i) {
      Connection& c = *connections[i];
      const bool ready = fds[i + 2].revents != 0;
      bool keep;
      if (c.lane.empty()) {
        keep = ready ? TakeHello(c) : now < c.hello_deadline;
      } else {
        // A worker sends nothing once its lane is open: the connection
        // turning readable means it closed (its process ended or it let
        // the lane go).
        keep = !ready;
        if (!keep) DropLane(c.lane);
      }
      if (keep) kept.push_back(std::move(connections[i]));
    }
    connections = std::move(kept);
    if ((fds[1].revents & POLLIN) != 0) {
      absl::StatusOr<UniqueFd> accepted = AcceptConnection(listener_.get());
      if (accepted.ok()) {
        auto c = std::make_unique<Connection>();
        c->fd = *std::move(accepted);
        c->hello_deadline = now + options_.hello_timeout;
        connections.push_back(std::move(c));
      } else {
        LOG(WARNING) << "lane socket " << options_.socket_name << ": " << accepted.status();
      }
    }
    absl::MutexLock l(&mu_);
    absl::erase_if(grants_, [now](const auto& grant) { return grant.second < now; });
  }
  absl::MutexLock l(&mu_);
  lanes_.clear();
}

}  // namespace pstrain
