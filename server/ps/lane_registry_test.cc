#include "server/ps/lane_registry.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/net/frame_connection.h"
#include "common/net/host_identity.h"
#include "common/net/shared_segment.h"
#include "common/net/unix_socket.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

// Serves a lane's connection by answering each frame with the frame
// reversed, and counts the connections it serves.
class ReversingServer : public LaneServer {
 public:
  class Served : public LaneServer::Connection {
   public:
    std::unique_ptr<FrameConnection> connection;
  };

  absl::StatusOr<std::unique_ptr<LaneServer::Connection>> Serve(
      UniqueFd socket, std::function<void()> ended) override {
    auto served = std::make_unique<Served>();
    // The first frame may arrive before Start returns: the handler waits
    // for the connection under the lock held here.
    absl::MutexLock l(&mu_);
    FrameConnection** connection = &connections_[++served_];
    FrameHandlers handlers;
    handlers.on_frame = [this, connection](std::string frame) {
      FrameConnection* to;
      {
        absl::MutexLock l(&mu_);
        to = *connection;
      }
      to->Send(std::string(frame.rbegin(), frame.rend())).IgnoreError();
    };
    handlers.on_closed = [ended](const absl::Status&) { ended(); };
    absl::StatusOr<std::unique_ptr<FrameConnection>> started =
        FrameConnection::Start(std::move(socket), 1 << 20, std::move(handlers));
    if (!started.ok()) return started.status();
    served->connection = *std::move(started);
    *connection = served->connection.get();
    return served;
  }

  int served() const {
    absl::MutexLock l(&mu_);
    return served_;
  }

 private:
  mutable absl::Mutex mu_;
  int served_ ABSL_GUARDED_BY(mu_) = 0;
  // Stable addresses (a map's nodes) that the handlers read.
  std::map<int, FrameConnection*> connections_ ABSL_GUARDED_BY(mu_);
};

class LaneRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<LaneRegistry>> registry = LaneRegistry::Start();
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = *std::move(registry);
    registry_->ServeWith(&server_);
    absl::StatusOr<std::string> host = LocalHostIdentity();
    ASSERT_TRUE(host.ok()) << host.status();
    host_ = *host;
  }

  OpenLaneResponse Grant() {
    OpenLaneRequest request;
    request.set_host(host_);
    absl::StatusOr<OpenLaneResponse> grant = registry_->Grant(request);
    EXPECT_TRUE(grant.ok()) << grant.status();
    return grant.value_or(OpenLaneResponse());
  }

  // Presents `grant` with `fd` (-1: none) on a new connection; returns the
  // connection and the shard's reply (empty: the lane is open).
  std::pair<UniqueFd, std::string> Present(const OpenLaneResponse& grant, const std::string& hello,
                                           int fd) {
    absl::StatusOr<UniqueFd> socket = ConnectToAbstractSocket(grant.socket());
    EXPECT_TRUE(socket.ok()) << socket.status();
    if (!socket.ok()) return {UniqueFd(), "no connection"};
    EXPECT_TRUE(SendFrame(socket->get(), hello, fd).ok());
    absl::StatusOr<ReceivedFrame> reply =
        ReceiveFrame(socket->get(), 4096, absl::Now() + absl::Seconds(10));
    EXPECT_TRUE(reply.ok()) << reply.status();
    return {*std::move(socket), reply.ok() ? reply->bytes : "no reply"};
  }

  std::unique_ptr<SharedSegment> NewSegment(int64_t bytes) {
    absl::StatusOr<std::unique_ptr<SharedSegment>> segment =
        SharedSegment::Create(bytes, "lane-test");
    EXPECT_TRUE(segment.ok()) << segment.status();
    return segment.ok() ? *std::move(segment) : nullptr;
  }

  // Waits up to 10 s for `open` lanes to be open.
  bool AwaitOpenLanes(int open) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (registry_->open_lanes() != open) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(10));
    }
    return true;
  }

  ReversingServer server_;
  std::unique_ptr<LaneRegistry> registry_;
  std::string host_;
};

TEST_F(LaneRegistryTest, AWorkerOnAnotherHostGetsNoGrant) {
  OpenLaneRequest request;
  request.set_host("00000000-0000-0000-0000-000000000000:4026531840");
  absl::StatusOr<OpenLaneResponse> grant = registry_->Grant(request);
  EXPECT_EQ(grant.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(grant.status().message().find("another host"), std::string::npos);
}

TEST_F(LaneRegistryTest, AGrantedSegmentIsSharedUntilItsConnectionCloses) {
  const OpenLaneResponse grant = Grant();
  EXPECT_EQ(grant.grant().size(), 16u);
  EXPECT_EQ(grant.socket(), registry_->socket_name());
  std::unique_ptr<SharedSegment> segment = NewSegment(1 << 20);
  ASSERT_NE(segment, nullptr);
  std::memcpy(segment->data() + 4096, "worker", 6);

  auto [connection, reply] = Present(grant, grant.grant(), segment->fd());
  EXPECT_EQ(reply, "");
  ASSERT_EQ(registry_->open_lanes(), 1);
  absl::StatusOr<std::shared_ptr<const SharedSegment>> found = registry_->Find(grant.grant());
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ((*found)->size(), 1 << 20);
  EXPECT_EQ(std::string((*found)->data() + 4096, 6), "worker");
  std::memcpy((*found)->data() + 8192, "shard", 5);
  EXPECT_EQ(std::string(segment->data() + 8192, 5), "shard");

  connection.reset();
  ASSERT_TRUE(AwaitOpenLanes(0));
  EXPECT_EQ(registry_->Find(grant.grant()).status().code(), absl::StatusCode::kNotFound);
  // What a pull in flight held stays mapped until it lets go.
  EXPECT_EQ(std::string((*found)->data() + 4096, 6), "worker");
}

TEST_F(LaneRegistryTest, AnOpenLanesConnectionIsHandedToTheServer) {
  const OpenLaneResponse grant = Grant();
  std::unique_ptr<SharedSegment> segment = NewSegment(4096);
  auto [connection, reply] = Present(grant, grant.grant(), segment->fd());
  ASSERT_EQ(reply, "");
  // The lane is served from its acknowledgement on: a frame sent at once
  // is taken.
  ASSERT_TRUE(SendFrame(connection.get(), "doorbell").ok());
  absl::StatusOr<ReceivedFrame> answer =
      ReceiveFrame(connection.get(), 4096, absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->bytes, "llebrood");
  EXPECT_EQ(server_.served(), 1);
}

TEST_F(LaneRegistryTest, WithoutAServerNoLaneIsGrantedAndOpenLanesClose) {
  const OpenLaneResponse grant = Grant();
  std::unique_ptr<SharedSegment> segment = NewSegment(4096);
  auto [connection, reply] = Present(grant, grant.grant(), segment->fd());
  ASSERT_EQ(reply, "");
  ASSERT_EQ(registry_->open_lanes(), 1);

  registry_->ServeWith(nullptr);
  EXPECT_EQ(registry_->open_lanes(), 0);
  // The worker's end sees its connection closed.
  EXPECT_EQ(ReceiveFrame(connection.get(), 4096, absl::Now() + absl::Seconds(10)).status().code(),
            absl::StatusCode::kUnavailable);
  OpenLaneRequest request;
  request.set_host(host_);
  EXPECT_EQ(registry_->Grant(request).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(LaneRegistryTest, AGrantOpensOneLaneOnly) {
  const OpenLaneResponse grant = Grant();
  std::unique_ptr<SharedSegment> first = NewSegment(4096);
  std::unique_ptr<SharedSegment> second = NewSegment(4096);
  auto [kept, accepted] = Present(grant, grant.grant(), first->fd());
  EXPECT_EQ(accepted, "");
  auto [closed, refused] = Present(grant, grant.grant(), second->fd());
  EXPECT_NE(refused.find("unknown, used or lapsed"), std::string::npos) << refused;
  EXPECT_EQ(registry_->open_lanes(), 1);
}

TEST_F(LaneRegistryTest, AnUnknownGrantIsRefused) {
  OpenLaneResponse grant = Grant();
  std::unique_ptr<SharedSegment> segment = NewSegment(4096);
  auto [connection, refused] = Present(grant, std::string(16, 'x'), segment->fd());
  EXPECT_NE(refused.find("unknown, used or lapsed"), std::string::npos) << refused;
  EXPECT_EQ(registry_->open_lanes(), 0);
}

TEST_F(LaneRegistryTest, AHelloWithoutASegmentIsRefused) {
  const OpenLaneResponse grant = Grant();
  auto [connection, refused] = Present(grant, grant.grant(), -1);
  EXPECT_NE(refused.find("no segment"), std::string::npos) << refused;
  EXPECT_EQ(registry_->open_lanes(), 0);
}

TEST_F(LaneRegistryTest, AnUnsealedSegmentIsRefused) {
  // A peer that could shrink its segment could make the shard fault on a
  // page that no longer exists.
  const OpenLaneResponse grant = Grant();
  UniqueFd unsealed(memfd_create("unsealed", MFD_CLOEXEC));
  ASSERT_TRUE(unsealed.valid());
  ASSERT_EQ(ftruncate(unsealed.get(), 4096), 0);
  auto [connection, refused] = Present(grant, grant.grant(), unsealed.get());
  EXPECT_NE(refused.find("not sealed"), std::string::npos) << refused;
  EXPECT_EQ(registry_->open_lanes(), 0);
}

}  // namespace
}  // namespace pstrain
