#include "server/coordinator/grpc_shard_client.h"

#include <atomic>
#include <memory>
#include <thread>

#include "common/net/grpc_server.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

// Fails the first `unavailable` calls of each method with UNAVAILABLE, then
// answers with `code`.
class FlakyShard final : public ParameterServer::CallbackService {
 public:
  std::atomic<int> unavailable{0};
  std::atomic<int> calls{0};
  grpc::StatusCode code = grpc::StatusCode::OK;

  grpc::ServerUnaryReactor* Snapshot(grpc::CallbackServerContext* context,
                                     const SnapshotRequest* request,
                                     SnapshotResponse* response) override {
    ++calls;
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    if (unavailable.fetch_sub(1) > 0) {
      reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting"));
      return reactor;
    }
    response->set_path(request->path());
    response->set_bytes(42);
    reactor->Finish(grpc::Status(code, code == grpc::StatusCode::OK ? "" : "refused"));
    return reactor;
  }
};

class GrpcShardClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start({}, {&shard_});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    options_.retry.initial_backoff = absl::Milliseconds(1);
    options_.retry.max_backoff = absl::Milliseconds(4);
    options_.retry.deadline = absl::Seconds(20);
  }

  FlakyShard shard_;
  std::unique_ptr<GrpcServer> server_;
  RealClock clock_;
  GrpcShardClientOptions options_;
};

TEST_F(GrpcShardClientTest, RetriesUnavailableWithBackoff) {
  shard_.unavailable = 3;
  GrpcShardClient client(server_->address(), clock_, options_);
  SnapshotRequest request;
  request.set_path("a/b");
  absl::StatusOr<SnapshotResponse> response = client.Snapshot(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->bytes(), 42);
  EXPECT_EQ(shard_.calls.load(), 4);
}

TEST_F(GrpcShardClientTest, DoesNotRetryOtherErrors) {
  shard_.code = grpc::StatusCode::FAILED_PRECONDITION;
  GrpcShardClient client(server_->address(), clock_, options_);
  absl::StatusOr<SnapshotResponse> response = client.Snapshot(SnapshotRequest());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(response.status().message().find("Snapshot: refused"), std::string::npos)
      << response.status();
  EXPECT_EQ(shard_.calls.load(), 1);
}

TEST_F(GrpcShardClientTest, GivesUpWhenTheRetryBudgetIsSpent) {
  shard_.unavailable = 1 << 30;
  options_.retry.deadline = absl::Milliseconds(50);
  GrpcShardClient client(server_->address(), clock_, options_);
  absl::StatusOr<SnapshotResponse> response = client.Snapshot(SnapshotRequest());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("attempts"), std::string::npos) << response.status();
}

TEST_F(GrpcShardClientTest, AnUnreachableShardIsUnavailableWithinTheDeadline) {
  const std::string address = server_->address();
  server_.reset();  // nothing listens there any more
  options_.snapshot_timeout = absl::Milliseconds(200);
  options_.retry.deadline = absl::Milliseconds(300);
  GrpcShardClient client(address, clock_, options_);
  const absl::Time start = absl::Now();
  absl::StatusOr<SnapshotResponse> response = client.Snapshot(SnapshotRequest());
  EXPECT_FALSE(response.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(GrpcShardClientTest, CancelStopsRetrying) {
  shard_.unavailable = 1 << 30;
  options_.retry.initial_backoff = absl::Seconds(30);
  options_.retry.max_backoff = absl::Seconds(30);
  options_.retry.deadline = absl::Minutes(5);
  GrpcShardClient client(server_->address(), clock_, options_);
  std::thread canceller([&] {
    while (shard_.calls.load() == 0) absl::SleepFor(absl::Milliseconds(1));
    client.Cancel();
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<SnapshotResponse> response = client.Snapshot(SnapshotRequest());
  canceller.join();
  EXPECT_FALSE(response.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(client.Snapshot(SnapshotRequest()).status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
