#include "server/coordinator/lease_hand_back.h"

#include <memory>
#include <utility>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/clock/fake_clock.h"
#include "common/status/error_reason.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/coordinator/testing/fake_shard.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kHolder[] = "worker/0#7";

// The push ledger of a shard that applied records [begin, end) of `lease`.
PushLedger Applied(int64_t lease, int64_t begin, int64_t end) {
  PushLedger ledger;
  LeaseProgress* progress = ledger.add_leases();
  progress->set_lease_id(lease);
  RecordSpan* span = progress->add_applied();
  span->set_begin(begin);
  span->set_end(end);
  return ledger;
}

// A job training on two fake shards, 100 records in leases of 10.
class LeaseHandBackTest : public ::testing::Test {
 protected:
  LeaseHandBackTest() {
    generation_.Connect(FakeShardGroup({&shard0_, &shard1_}), {1, 1});
    control_.Start(std::make_shared<StartedJob>());
    DataLeaseOptions options;
    options.num_records = 100;
    options.chunk_size = 10;
    options.epochs = 1;
    data_ = *DataLeaseManager::Create(clock_, options);
  }

  FakeClock clock_;
  PosixEnv env_;
  FakeShard shard0_{env_, "localhost:1"};
  FakeShard shard1_{env_, "localhost:2"};
  JobControl control_{"job-1", clock_};
  TrainingGeneration generation_{clock_};
  LeaseHandBack hand_back_{"job-1", generation_, control_};
  std::unique_ptr<DataLeaseManager> data_;
};

TEST_F(LeaseHandBackTest, ALostWorkersLeaseGoesBackWithoutWhatAnyShardApplied) {
  const DataLease lease = *data_->Acquire(kHolder);
  ASSERT_EQ(lease.range().begin(), 0);
  shard0_.SetLedger(Applied(lease.lease_id(), 0, 4));
  shard1_.SetLedger(Applied(lease.lease_id(), 0, 6));

  EXPECT_EQ(hand_back_.ReturnUntrained(*data_, kHolder),
            "6 records of 1 data lease were trained by its applied pushes and count as "
            "finished; ");
  // Each shard was asked for this lease, and sealed it while answering.
  for (FakeShard* shard : {&shard0_, &shard1_}) {
    ASSERT_EQ(shard->ledger_reads().size(), 1u);
    EXPECT_TRUE(shard->ledger_reads()[0].seal());
    EXPECT_EQ(shard->ledger_reads()[0].lease_ids(0), lease.lease_id());
  }
  // Records 6..10 are trained again, by whoever leases them next; 0..6 never.
  EXPECT_THAT(data_->LeasesOf(kHolder), IsEmpty());
  const DataLease again = *data_->Acquire("worker/1#3");
  EXPECT_EQ(again.range().begin(), 6);
  EXPECT_EQ(again.range().end(), 10);
}

TEST_F(LeaseHandBackTest, NothingAppliedLeavesTheLeaseToGoBackWhole) {
  data_->Acquire(kHolder).IgnoreError();
  EXPECT_EQ(hand_back_.ReturnUntrained(*data_, kHolder), "");
  EXPECT_EQ(data_->LeasesOf(kHolder).size(), 1u);
}

TEST_F(LeaseHandBackTest, APushOfUnknownOutcomeCompletesWhatTheLedgersShow) {
  const DataLease lease = *data_->Acquire(kHolder);
  shard1_.SetLedger(Applied(lease.lease_id(), 0, 3));
  ASSERT_TRUE(hand_back_.CompleteUnknownOutcome(*data_, kHolder, lease.lease_id()).ok());
  EXPECT_THAT(data_->LeasesOf(kHolder), IsEmpty());
  EXPECT_EQ(data_->Acquire("worker/1#3")->range().begin(), 3);
}

TEST_F(LeaseHandBackTest, WhileRollingBackTheLeaseIsVoid) {
  const DataLease lease = *data_->Acquire(kHolder);
  control_.MoveTo(JobPhase::kRollingBack);
  const absl::Status refused = hand_back_.CompleteUnknownOutcome(*data_, kHolder, lease.lease_id());
  EXPECT_EQ(ReasonOf(refused), ERROR_REASON_RUN_ROLLED_BACK);
  EXPECT_THAT(refused.message(), HasSubstr("is rolling back"));
  EXPECT_EQ(hand_back_.ReturnUntrained(*data_, kHolder), "");
  EXPECT_THAT(shard0_.ledger_reads(), IsEmpty());
}

TEST_F(LeaseHandBackTest, AnUnknownLeaseIsRefusedAsCompleteRefusesIt) {
  const absl::Status refused = hand_back_.CompleteUnknownOutcome(*data_, kHolder, 42);
  EXPECT_EQ(ReasonOf(refused), ERROR_REASON_LEASE_UNKNOWN);
  EXPECT_THAT(shard0_.ledger_reads(), IsEmpty());
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
