// The message size limit as a peer meets it: a message over the server's
// limit, or over the channel's own, is refused with RESOURCE_EXHAUSTED
// naming --max_message_mb, and one within both arrives.

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "common/net/channel_security.h"
#include "common/net/grpc_server.h"
#include "common/status/grpc_status.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "protos/health.grpc.pb.h"

namespace pstrain {
namespace {

constexpr int kLimit = 1 << 20;

class MessageLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GrpcServerOptions options;
    options.max_message_bytes = kLimit;
    absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start(options, {});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  // A health check whose request carries `bytes` bytes of service name,
  // over a channel limited to `channel_limit`.
  absl::Status CheckWithName(int bytes, int channel_limit) {
    ChannelSecurity security;
    security.max_message_bytes = channel_limit;
    auto stub =
        grpc::health::v1::Health::NewStub(CreateSecureChannel(server_->address(), security));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(std::string(bytes, 'x'));
    grpc::health::v1::HealthCheckResponse response;
    return FromGrpcStatus(stub->Check(&context, request, &response));
  }

  std::unique_ptr<GrpcServer> server_;
};

TEST_F(MessageLimitTest, AMessageWithinTheLimitReachesTheService) {
  // The health service itself refuses a service name that long: it read
  // the request.
  const absl::Status status = CheckWithName(kLimit / 2, kDefaultMaxMessageBytes);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_FALSE(absl::StrContains(status.message(), "--max_message_mb")) << status;
}

TEST_F(MessageLimitTest, TheServerRefusesAMessageOverItsLimitNamingTheFlag) {
  const absl::Status status = CheckWithName(2 * kLimit, kDefaultMaxMessageBytes);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "vs. 1048576")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "--max_message_mb")) << status;
}

TEST_F(MessageLimitTest, AChannelRefusesToSendAMessageOverItsOwnLimit) {
  const absl::Status status = CheckWithName(kLimit / 2, kLimit / 4);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "--max_message_mb")) << status;
}

}  // namespace
}  // namespace pstrain
