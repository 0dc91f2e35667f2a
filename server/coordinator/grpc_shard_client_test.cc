#include "server/coordinator/grpc_shard_client.h"

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "common/net/grpc_server.h"
#include "common/status/error_reason.h"
#include "gtest/gtest.h"
#include "server/ps/testing/ps_test_client.h"
#include "server/ps/testing/wired_shard.h"

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

  grpc::ServerUnaryReactor* CommitRound(grpc::CallbackServerContext* context,
                                        const CommitRoundRequest* request,
                                        CommitRoundResponse* response) override {
    ++calls;
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    if (unavailable.fetch_sub(1) > 0) {
      reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting"));
      return reactor;
    }
    response->set_version(request->round() + 1);
    reactor->Finish(grpc::Status::OK);
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

// Cancel ends `call` (of any method) while it backs off between retries,
// and every later call is Cancelled.
void ExpectCancelStopsRetrying(FlakyShard& shard, GrpcShardClient& client,
                               const std::function<absl::Status()>& call) {
  shard.unavailable = 1 << 30;
  std::thread canceller([&] {
    while (shard.calls.load() == 0) absl::SleepFor(absl::Milliseconds(1));
    client.Cancel();
  });
  const absl::Time start = absl::Now();
  const absl::Status status = call();
  canceller.join();
  EXPECT_FALSE(status.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(call().code(), absl::StatusCode::kCancelled);
}

TEST_F(GrpcShardClientTest, CancelStopsRetrying) {
  options_.retry.initial_backoff = absl::Seconds(30);
  options_.retry.max_backoff = absl::Seconds(30);
  options_.retry.deadline = absl::Minutes(5);
  GrpcShardClient snapshots(server_->address(), clock_, options_);
  ExpectCancelStopsRetrying(shard_, snapshots,
                            [&] { return snapshots.Snapshot(SnapshotRequest()).status(); });
  shard_.calls = 0;
  GrpcShardClient commits(server_->address(), clock_, options_);
  ExpectCancelStopsRetrying(shard_, commits,
                            [&] { return commits.CommitRound(CommitRoundRequest()).status(); });
}

TEST_F(GrpcShardClientTest, CommitRoundRetriesUnavailable) {
  shard_.unavailable = 2;
  GrpcShardClient client(server_->address(), clock_, options_);
  CommitRoundRequest request;
  request.set_round(6);
  absl::StatusOr<CommitRoundResponse> response = client.CommitRound(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->version(), 7);
  EXPECT_EQ(shard_.calls.load(), 3);
}

// Against the real shard: a round staged there is committed once, and a
// refusal comes back with the reason the caller branches on.
TEST(GrpcShardClientOnARealShardTest, CommitRoundAppliesTheRoundAndKeepsTheReason) {
  absl::StatusOr<std::unique_ptr<WiredShard>> shard = WiredShard::Start();
  ASSERT_TRUE(shard.ok()) << shard.status();
  CreateVariablesRequest job = DenseVariablesRequest("job-1", 0, 2, 2, 1.0f, {{"w", Shape({2})}});
  job.mutable_training()->set_update_mode(UPDATE_MODE_SYNC);
  job.set_rounds_agreed(true);
  ASSERT_TRUE((*shard)->Create(job).ok());
  const std::vector<float> g = {2, 4};
  PushRequest push =
      DensePushMessages("job-1", MakePushId(1, 1, 1), 0, "w", {2}, g, 1 << 20, 1)[0].push();
  ASSERT_EQ((*shard)->PushFromElsewhere(push).outcome(), PUSH_OUTCOME_AGGREGATED);

  RealClock clock;
  GrpcShardClient client((*shard)->address(), clock);
  CommitRoundRequest request;
  request.set_job_id("job-1");
  request.set_round(0);
  *request.add_members() = MakePushId(0, 1, 1);
  const absl::Status missing = client.CommitRound(request).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ReasonOf(missing), ERROR_REASON_ROUND_MEMBER_MISSING) << missing;
  EXPECT_EQ(missing.message().rfind("CommitRound: ", 0), 0u) << missing;
  EXPECT_EQ((*shard)->Version("job-1"), 0);

  *request.mutable_members(0) = MakePushId(1, 1, 1);
  for (int attempt = 0; attempt < 2; ++attempt) {  // a retry changes nothing
    absl::StatusOr<CommitRoundResponse> committed = client.CommitRound(request);
    ASSERT_TRUE(committed.ok()) << committed.status();
    EXPECT_EQ(committed->version(), 1);
    EXPECT_EQ((*shard)->Dense("job-1", "w"), (std::vector<float>{-2, -4}));
  }
  request.set_round(3);
  EXPECT_EQ(ReasonOf(client.CommitRound(request).status()), ERROR_REASON_WRONG_ROUND);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
