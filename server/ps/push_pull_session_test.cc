#include "server/ps/push_pull_session.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/clock/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/ps/testing/ps_test_client.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;

// A wire as a test drives it: requests are handed over by the test, reads
// and ends are counted, and writes either complete at once (as on a lane's
// connection) or wait for the test to complete them (as on gRPC).
class FakeWire : public SessionWire {
 public:
  explicit FakeWire(bool writes_wait) : writes_wait_(writes_wait) {}

  void ReadNext() override {
    absl::MutexLock l(&mu_);
    ++reads_asked_;
  }
  Written Write(const PushPullResponse& answer, PulledSlices slices) override {
    EXPECT_TRUE(slices.empty());
    absl::MutexLock l(&mu_);
    written_.push_back(answer);
    if (!writes_wait_) return Written::kDone;
    ++writes_pending_;
    return Written::kPending;
  }
  bool TakesSlices() const override { return false; }
  void End() override {
    absl::MutexLock l(&mu_);
    ++ends_;
  }

  int reads_asked() const {
    absl::MutexLock l(&mu_);
    return reads_asked_;
  }
  int ends() const {
    absl::MutexLock l(&mu_);
    return ends_;
  }
  int writes_pending() const {
    absl::MutexLock l(&mu_);
    return writes_pending_;
  }
  void TakePendingWrite() {
    absl::MutexLock l(&mu_);
    --writes_pending_;
  }
  std::vector<PushPullResponse> written() const {
    absl::MutexLock l(&mu_);
    return written_;
  }

 private:
  const bool writes_wait_;
  mutable absl::Mutex mu_;
  int reads_asked_ = 0;
  int ends_ = 0;
  int writes_pending_ = 0;
  std::vector<PushPullResponse> written_;
};

class PushPullSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ShardStoreOptions options;
    options.checkpoint_root = ::testing::TempDir() + "ckpt";
    store_ = std::make_unique<ShardStore>(options, clock_, registry_);
    CreateVariablesRequest job;
    job.set_job_id("job-1");
    job.set_num_shards(1);
    job.set_num_workers(1);
    job.mutable_optimizer()->set_learning_rate(1.0f);
    VariableSpec* w = job.add_variables();
    w->set_name("w");
    w->set_kind(VARIABLE_KIND_DENSE);
    w->set_dtype(DATA_TYPE_FLOAT32);
    w->mutable_shape()->add_dims(2);
    w->mutable_initializer()->set_kind(INITIALIZER_KIND_CONSTANT);
    w->mutable_initializer()->set_value(3);
    ASSERT_TRUE(store_->CreateVariables(job).ok());
  }

  // Hands `request` to the session as a wire would.
  static void Deliver(PushPullSession& session, PushPullRequest request) {
    session.OnRequest(request, absl::OkStatus());
  }

  static std::vector<PushPullRequest> Push(uint64_t tag, uint64_t sequence) {
    const std::vector<float> gradient = {1, 2};
    return DensePushMessages("job-1", MakePushId(0, 1, sequence), 0, "w", {2}, gradient, 1 << 20,
                             tag);
  }

  FakeClock clock_;
  prometheus::Registry registry_;
  std::unique_ptr<ShardStore> store_;
};

TEST_F(PushPullSessionTest, AnswersWrittenAtOnceComeInOrderAndTheSessionEndsOnce) {
  FakeWire wire(/*writes_wait=*/false);
  PushPullSession session(*store_, nullptr, PushPullSessionOptions(), wire);
  session.Start();
  EXPECT_EQ(wire.reads_asked(), 1);
  for (PushPullRequest& m : Push(/*tag=*/7, /*sequence=*/1)) Deliver(session, m);
  Deliver(session, PullMessage("job-1", {"w"}, /*tag=*/8));
  // Every request handled asks for the next.
  EXPECT_EQ(wire.reads_asked(), 3);
  const std::vector<PushPullResponse> answers = wire.written();
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].tag(), 7u);
  EXPECT_EQ(answers[0].push().outcome(), PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(answers[1].tag(), 8u);
  EXPECT_THAT(DenseValues(answers, "w"), ElementsAre(2, 1));  // 3 - 1 * {1, 2}
  EXPECT_EQ(wire.ends(), 0);
  session.OnReadsDone();
  EXPECT_EQ(wire.ends(), 1);
}

TEST_F(PushPullSessionTest, ARequestThatDoesNotParseIsAnsweredAndTheSessionGoesOn) {
  FakeWire wire(/*writes_wait=*/false);
  PushPullSession session(*store_, nullptr, PushPullSessionOptions(), wire);
  session.Start();
  PushPullRequest garbage;
  session.OnRequest(garbage, absl::InvalidArgumentError("not a message"));
  Deliver(session, PullMessage("job-1", {"w"}, /*tag=*/2));
  const std::vector<PushPullResponse> answers = wire.written();
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].error().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(answers[0].error().message().find("does not parse"), std::string::npos);
  EXPECT_THAT(DenseValues({answers[1]}, "w"), ElementsAre(3, 3));
}

TEST_F(PushPullSessionTest, APullWaitingForAVersionIsAnsweredWhenAPushMakesIt) {
  FakeWire wire(/*writes_wait=*/false);
  PushPullSession session(*store_, nullptr, PushPullSessionOptions(), wire);
  session.Start();
  Deliver(session, PullMessage("job-1", {"w"}, /*tag=*/1, /*min_version=*/1, /*wait_ms=*/60000));
  EXPECT_TRUE(wire.written().empty());
  for (PushPullRequest& m : Push(/*tag=*/2, /*sequence=*/1)) Deliver(session, m);
  const std::vector<PushPullResponse> answers = wire.written();
  ASSERT_EQ(answers.size(), 2u);
  // The pull's answer is queued from the push's apply, before the push's
  // own answer.
  EXPECT_EQ(answers[0].tag(), 1u);
  EXPECT_EQ(answers[0].pull().version(), 1);
  EXPECT_EQ(answers[1].tag(), 2u);
}

TEST_F(PushPullSessionTest, CancelStopsAWaitingPullAndTheSessionEndsAfterIt) {
  FakeWire wire(/*writes_wait=*/false);
  PushPullSession session(*store_, nullptr, PushPullSessionOptions(), wire);
  session.Start();
  Deliver(session, PullMessage("job-1", {"w"}, /*tag=*/1, /*min_version=*/5, /*wait_ms=*/60000));
  session.OnReadsDone();
  // A pull still waits: the session is not over.
  EXPECT_EQ(wire.ends(), 0);
  session.Cancel();
  const std::vector<PushPullResponse> answers = wire.written();
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].error().code(), static_cast<int>(absl::StatusCode::kCancelled));
  EXPECT_EQ(wire.ends(), 1);
}

TEST_F(PushPullSessionTest, WritesInFlightHoldBackReadsPastTheQueueLimitAndTheEnd) {
  FakeWire wire(/*writes_wait=*/true);
  PushPullSessionOptions options;
  options.chunk_bytes = 4;
  // Each queued pull counts chunk_bytes: two fit, the third stops reading.
  options.max_queued_bytes = 10;
  PushPullSession session(*store_, nullptr, options, wire);
  session.Start();
  for (uint64_t tag = 1; tag <= 3; ++tag) Deliver(session, PullMessage("job-1", {"w"}, tag));
  EXPECT_EQ(wire.reads_asked(), 3);  // Start, then after the first two pulls
  EXPECT_EQ(wire.writes_pending(), 1);
  session.OnReadsDone();
  // Each pull is two chunks (one float each); answers go one write at a time.
  int writes = 1;
  while (wire.writes_pending() > 0) {
    EXPECT_EQ(wire.ends(), 0);
    wire.TakePendingWrite();
    session.OnWriteDone(true);
    ++writes;
  }
  EXPECT_EQ(writes - 1, 6);
  EXPECT_EQ(wire.ends(), 1);
  int ends_of_pull = 0;
  for (const PushPullResponse& a : wire.written()) ends_of_pull += a.pull().end_of_pull();
  EXPECT_EQ(ends_of_pull, 3);
}

}  // namespace
}  // namespace pstrain
