// The token check on a real server: each service kind through a loopback
// channel, with the right, the wrong, the other kind's and no token.

#include <memory>
#include <string>

#include "common/net/channel_security.h"
#include "common/net/grpc_server.h"
#include "common/net/raw_push_pull_service.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "protos/coordinator.grpc.pb.h"
#include "protos/health.grpc.pb.h"
#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {
namespace {

class OkJobService final : public JobService::CallbackService {
 public:
  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* context, const SubmitJobRequest*,
                                      SubmitJobResponse*) override {
    ++submitted;
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* context, const ListJobsRequest*,
                                     ListJobsResponse*) override {
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  int submitted = 0;
};

class OkParameterServer final : public ParameterServer::CallbackService {
 public:
  grpc::ServerUnaryReactor* Pull(grpc::CallbackServerContext* context, const PullRequest*,
                                 PullResponse*) override {
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  grpc::ServerUnaryReactor* CommitRound(grpc::CallbackServerContext* context,
                                        const CommitRoundRequest*,
                                        CommitRoundResponse* response) override {
    response->set_version(1);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

class TokenGuardedServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GrpcServerOptions options;
    options.security.client_token = "client-secret";
    options.security.cluster_token = "cluster-secret";
    absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start(options, {&jobs_, &ps_});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  std::shared_ptr<grpc::Channel> Channel(const std::string& token) {
    ChannelSecurity security;
    security.token = token;
    return CreateSecureChannel(server_->address(), security);
  }

  grpc::StatusCode Submit(const std::string& token) {
    grpc::ClientContext context;
    SubmitJobResponse response;
    return JobService::NewStub(Channel(token))
        ->SubmitJob(&context, SubmitJobRequest(), &response)
        .error_code();
  }
  grpc::StatusCode List(const std::string& token) {
    grpc::ClientContext context;
    ListJobsResponse response;
    return JobService::NewStub(Channel(token))
        ->ListJobs(&context, ListJobsRequest(), &response)
        .error_code();
  }
  grpc::StatusCode Pull(const std::string& token) {
    grpc::ClientContext context;
    PullResponse response;
    return ParameterServer::NewStub(Channel(token))
        ->Pull(&context, PullRequest(), &response)
        .error_code();
  }

  OkJobService jobs_;
  OkParameterServer ps_;
  std::unique_ptr<GrpcServer> server_;
};

TEST_F(TokenGuardedServicesTest, AdminCallNeedsTheClientToken) {
  EXPECT_EQ(Submit("client-secret"), grpc::StatusCode::OK);
  EXPECT_EQ(Submit("cluster-secret"), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Submit("wrong"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Submit(""), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(jobs_.submitted, 1);
}

TEST_F(TokenGuardedServicesTest, ReadCallTakesEitherToken) {
  EXPECT_EQ(List("client-secret"), grpc::StatusCode::OK);
  EXPECT_EQ(List("cluster-secret"), grpc::StatusCode::OK);
  EXPECT_EQ(List("wrong"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(List(""), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(TokenGuardedServicesTest, ParameterServerNeedsTheClusterToken) {
  EXPECT_EQ(Pull("cluster-secret"), grpc::StatusCode::OK);
  EXPECT_EQ(Pull("client-secret"), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Pull("wrong"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Pull(""), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(TokenGuardedServicesTest, HealthChecksNeedNoToken) {
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = grpc::health::v1::Health::NewStub(Channel(""))
                            ->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST(TokenGuardedServicesStartTest, ServerWithoutTokensServesEveryone) {
  OkJobService jobs;
  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start({}, {&jobs});
  ASSERT_TRUE(server.ok()) << server.status();
  grpc::ClientContext context;
  SubmitJobResponse response;
  EXPECT_TRUE(JobService::NewStub(CreateSecureChannel((*server)->address(), {}))
                  ->SubmitJob(&context, SubmitJobRequest(), &response)
                  .ok());
}

// The shard's own service serves PushPull on raw ByteBuffers; it is guarded
// like the typed one.
class OkRawPushPullParameterServer final : public RawPushPullParameterServer {
 public:
  grpc::ServerUnaryReactor* Pull(grpc::CallbackServerContext* context, const PullRequest*,
                                 PullResponse*) override {
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  grpc::ServerUnaryReactor* CommitRound(grpc::CallbackServerContext* context,
                                        const CommitRoundRequest*,
                                        CommitRoundResponse* response) override {
    response->set_version(1);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

TEST(TokenGuardedServicesStartTest, RawPushPullParameterServerNeedsTheClusterToken) {
  OkRawPushPullParameterServer ps;
  GrpcServerOptions options;
  options.security.client_token = "client-secret";
  options.security.cluster_token = "cluster-secret";
  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start(options, {&ps});
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = [&](const std::string& token) {
    ChannelSecurity security;
    security.token = token;
    return ParameterServer::NewStub(CreateSecureChannel((*server)->address(), security));
  };
  auto pull = [&](const std::string& token) {
    grpc::ClientContext context;
    PullResponse response;
    return stub(token)->Pull(&context, PullRequest(), &response).error_code();
  };
  EXPECT_EQ(pull("cluster-secret"), grpc::StatusCode::OK);
  EXPECT_EQ(pull("client-secret"), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(pull("wrong"), grpc::StatusCode::UNAUTHENTICATED);
  // The coordinator's commit of an agreed sync round reaches the shard.
  auto commit = [&](const std::string& token) {
    grpc::ClientContext context;
    CommitRoundResponse response;
    return stub(token)->CommitRound(&context, CommitRoundRequest(), &response).error_code();
  };
  EXPECT_EQ(commit("cluster-secret"), grpc::StatusCode::OK);
  EXPECT_EQ(commit("client-secret"), grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace pstrain
