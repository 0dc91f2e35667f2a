#include "server/ps/lane_registry.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "common/net/host_identity.h"
#include "common/net/shared_segment.h"
#include "common/net/unix_socket.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

class LaneRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<LaneRegistry>> registry = LaneRegistry::Start();
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = *std::move(registry);
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
