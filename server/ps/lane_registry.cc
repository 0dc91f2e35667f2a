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

// A connection that has not yet presented its grant.
struct LaneRegistry::Connection {
  UniqueFd fd;
  absl::Time hello_deadline;
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
  UniqueFd wake(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
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
  Wake();
  thread_.join();
  ServeWith(nullptr);
}

void LaneRegistry::Wake() {
  const uint64_t one = 1;
  if (write(wake_.get(), &one, sizeof(one)) != sizeof(one)) {
    PLOG(ERROR) << "cannot wake the lane socket's thread";
  }
}

void LaneRegistry::ServeWith(LaneServer* server) {
  absl::flat_hash_map<std::string, std::unique_ptr<LaneServer::Connection>> served;
  {
    absl::MutexLock serve(&serve_mu_);
    server_ = server;
    absl::MutexLock l(&mu_);
    serving_ = server != nullptr;
    if (server != nullptr) return;
    served.swap(served_);
    for (const auto& [lane, connection] : served) lanes_.erase(lane);
  }
  // Destroyed outside the locks: each waits for its lane's requests to be
  // answered or cancelled, and its LaneEnded call needs mu_.
  served.clear();
}

void LaneRegistry::LaneEnded(const std::string& lane) {
  {
    absl::MutexLock l(&mu_);
    lanes_.erase(lane);
    ended_.push_back(lane);
  }
  Wake();
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
  if (!serving_) {
    return absl::FailedPreconditionError("this shard serves no shared-memory lanes now");
  }
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

void LaneRegistry::TakeHello(Connection& connection) {
  absl::StatusOr<ReceivedFrame> hello =
      ReceiveFrame(connection.fd.get(), kMaxHelloBytes, absl::Now() + absl::Seconds(1));
  if (!hello.ok()) {
    LOG(WARNING) << "lane socket " << options_.socket_name
                 << ": a connection closed without a hello: " << hello.status();
    return;
  }
  auto refuse = [&](const std::string& why) {
    LOG(WARNING) << "lane socket " << options_.socket_name << ": refused a lane: " << why;
    SendFrame(connection.fd.get(), why).IgnoreError();
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
  const std::string lane = std::move(hello->bytes);
  // The lane is findable before the worker learns it is open, and served
  // from then on: its first request may follow the answer at once.
  absl::MutexLock serve(&serve_mu_);
  if (server_ == nullptr) return refuse("this shard serves no shared-memory lanes now");
  {
    absl::MutexLock l(&mu_);
    lanes_[lane] = std::shared_ptr<const SharedSegment>(*std::move(segment));
  }
  const int socket = connection.fd.get();
  if (absl::Status s = SendFrame(socket, ""); !s.ok()) {
    absl::MutexLock l(&mu_);
    lanes_.erase(lane);
    return;
  }
  absl::StatusOr<std::unique_ptr<LaneServer::Connection>> served =
      server_->Serve(std::move(connection.fd), [this, lane] { LaneEnded(lane); });
  absl::MutexLock l(&mu_);
  if (!served.ok()) {
    LOG(WARNING) << "lane socket " << options_.socket_name
                 << ": cannot serve a lane: " << served.status();
    lanes_.erase(lane);
    return;
  }
  served_[lane] = *std::move(served);
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
    if ((fds[0].revents & POLLIN) != 0) {
      uint64_t wakes;
      if (read(wake_.get(), &wakes, sizeof(wakes)) < 0 && errno != EAGAIN) {
        PLOG(ERROR) << "lane socket " << options_.socket_name << ": reading its wake-up";
      }
    }
    std::vector<std::unique_ptr<LaneServer::Connection>> ended;
    {
      absl::MutexLock l(&mu_);
      if (stopping_) break;
      for (const std::string& lane : ended_) {
        auto it = served_.find(lane);
        if (it == served_.end()) continue;  // ServeWith(nullptr) took it
        ended.push_back(std::move(it->second));
        served_.erase(it);
      }
      ended_.clear();
    }
    ended.clear();  // outside the lock: each joins its thread
    const absl::Time now = absl::Now();
    std::vector<std::unique_ptr<Connection>> waiting;
    for (size_t i = 0; i < connections.size(); ++i) {
      if (fds[i + 2].revents != 0) {
        TakeHello(*connections[i]);
      } else if (now < connections[i]->hello_deadline) {
        waiting.push_back(std::move(connections[i]));
      }
    }
    connections = std::move(waiting);
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
}

}  // namespace pstrain
