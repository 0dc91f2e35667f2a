#include "common/net/grpc_server.h"

#include <memory>

#include "common/net/health_client.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace {

constexpr absl::Duration kTimeout = absl::Seconds(5);

GrpcServerOptions WithHealthPort() {
  GrpcServerOptions options;
  options.health_listen_address = "127.0.0.1:0";
  return options;
}

TEST(GrpcServerTest, NoHealthPortUnlessAsked) {
  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start({}, {});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->health_address(), "");
  EXPECT_TRUE(CheckHealth((*server)->address(), kTimeout).ok());
}

// What a kubelet probe sees: the main port's status, on a port of its own.
TEST(GrpcServerTest, HealthPortReportsTheMainPortsStatus) {
  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start(WithHealthPort(), {});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string health = (*server)->health_address();
  ASSERT_NE(health, "");
  EXPECT_NE(health, (*server)->address());
  EXPECT_TRUE(CheckHealth(health, kTimeout).ok());

  (*server)->SetServing(false);
  EXPECT_EQ(CheckHealth(health, kTimeout).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CheckHealth((*server)->address(), kTimeout).code(),
            absl::StatusCode::kFailedPrecondition);
  (*server)->SetServing(true);
  EXPECT_TRUE(CheckHealth(health, kTimeout).ok());

  (*server)->Shutdown(absl::ZeroDuration());
  EXPECT_EQ(CheckHealth(health, absl::Seconds(1)).code(), absl::StatusCode::kUnavailable);
}

// A JobService whose ListJobs answers OK with no jobs; the rest is
// UNIMPLEMENTED.
class ListingJobService : public JobService::CallbackService {
 public:
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* context,
                                     const ListJobsRequest* /*request*/,
                                     ListJobsResponse* /*response*/) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

grpc::Status ListJobsAt(const std::string& address) {
  auto stub = JobService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kTimeout));
  ListJobsResponse response;
  return stub->ListJobs(&context, ListJobsRequest(), &response);
}

// The plaintext port must not become a way around the main port's TLS and
// tokens: the services registered on the main port are not there.
TEST(GrpcServerTest, HealthPortServesNoOtherService) {
  ListingJobService jobs;
  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start(WithHealthPort(), {&jobs});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE(ListJobsAt((*server)->address()).ok());
  EXPECT_EQ(CheckHealth((*server)->address(), kTimeout, "pstrain.JobService").code(),
            absl::StatusCode::kNotFound)
      << "health is reported for the whole server only";
  EXPECT_EQ(ListJobsAt((*server)->health_address()).error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

TEST(GrpcServerTest, BadOrTakenHealthAddressIsRefused) {
  GrpcServerOptions malformed = WithHealthPort();
  malformed.health_listen_address = "nonsense";
  absl::StatusOr<std::unique_ptr<GrpcServer>> refused = GrpcServer::Start(malformed, {});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("nonsense"), std::string::npos) << refused.status();

  absl::StatusOr<std::unique_ptr<GrpcServer>> first = GrpcServer::Start({}, {});
  ASSERT_TRUE(first.ok()) << first.status();
  GrpcServerOptions clashing = WithHealthPort();
  clashing.health_listen_address = (*first)->address();
  refused = GrpcServer::Start(clashing, {});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find((*first)->address()), std::string::npos)
      << refused.status();
}

}  // namespace
}  // namespace pstrain
