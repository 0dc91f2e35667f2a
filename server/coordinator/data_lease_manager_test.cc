#include "server/coordinator/data_lease_manager.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/clock/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

RecordRange Records(int64_t begin, int64_t end) {
  RecordRange range;
  range.set_begin(begin);
  range.set_end(end);
  return range;
}

// "[b, e)@epoch" of a lease, so failures read as what was handed out.
std::string Describe(const DataLease& lease) {
  if (lease.end_of_data()) return "end_of_data";
  return "[" + std::to_string(lease.range().begin()) + ", " + std::to_string(lease.range().end()) +
         ")@" + std::to_string(lease.epoch());
}

std::string Describe(const DataPosition& position) {
  std::string text = "epoch " + std::to_string(position.epoch()) + ":";
  for (const RecordRange& r : position.finished()) {
    text += " [" + std::to_string(r.begin()) + ", " + std::to_string(r.end()) + ")";
  }
  return text;
}

DataLeaseOptions Options(int64_t num_records, int64_t chunk_size, int32_t epochs) {
  DataLeaseOptions options;
  options.num_records = num_records;
  options.chunk_size = chunk_size;
  options.epochs = epochs;
  options.lease_timeout = absl::Seconds(30);
  return options;
}

class DataLeaseManagerTest : public ::testing::Test {
 protected:
  std::unique_ptr<DataLeaseManager> Make(DataLeaseOptions options) {
    absl::StatusOr<std::unique_ptr<DataLeaseManager>> manager =
        DataLeaseManager::Create(clock_, options);
    EXPECT_TRUE(manager.ok()) << manager.status();
    return manager.ok() ? std::move(*manager) : nullptr;
  }

  DataLease MustAcquire(DataLeaseManager& manager, const std::string& holder) {
    absl::StatusOr<DataLease> lease = manager.Acquire(holder);
    EXPECT_TRUE(lease.ok()) << lease.status();
    return lease.ok() ? *lease : DataLease();
  }

  FakeClock clock_;
};

TEST_F(DataLeaseManagerTest, RefusesBadOptions) {
  EXPECT_EQ(DataLeaseManager::Create(clock_, Options(0, 4, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DataLeaseManager::Create(clock_, Options(10, 0, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DataLeaseManager::Create(clock_, Options(10, 4, -1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  DataLeaseOptions options = Options(10, 4, 1);
  options.lease_timeout = absl::ZeroDuration();
  EXPECT_EQ(DataLeaseManager::Create(clock_, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(DataLeaseManagerTest, HandsOutChunksInOrderWithADeadline) {
  auto manager = Make(Options(10, 4, 1));
  DataLease a = MustAcquire(*manager, "worker/0#1");
  EXPECT_EQ(Describe(a), "[0, 4)@0");
  EXPECT_EQ(a.deadline_unix_ms(), absl::ToUnixMillis(clock_.Now() + absl::Seconds(30)));
  EXPECT_FALSE(a.end_of_data());
  EXPECT_EQ(Describe(MustAcquire(*manager, "worker/1#1")), "[4, 8)@0");
  EXPECT_EQ(Describe(MustAcquire(*manager, "worker/0#1")), "[8, 10)@0");
  EXPECT_NE(a.lease_id(), 0);
}

TEST_F(DataLeaseManagerTest, EndOfDataOnlyOnceTheLastEpochIsCompleted) {
  auto manager = Make(Options(8, 4, 1));
  DataLease a = MustAcquire(*manager, "w");
  DataLease b = MustAcquire(*manager, "w");
  // All handed out but not finished: b's records may still come back.
  absl::StatusOr<DataLease> none = manager->Acquire("w");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(none.status().message(), HasSubstr("2 leases outstanding"));
  ASSERT_TRUE(manager->Complete(a.lease_id(), "w", {}).ok());
  EXPECT_FALSE(manager->end_of_data());
  ASSERT_TRUE(manager->Complete(b.lease_id(), "w", {}).ok());
  EXPECT_TRUE(manager->end_of_data());
  EXPECT_TRUE(MustAcquire(*manager, "w").end_of_data());
}

TEST_F(DataLeaseManagerTest, EpochsFollowEachOtherAndZeroMeansUnlimited) {
  auto manager = Make(Options(4, 4, 0));
  for (int epoch = 0; epoch < 5; ++epoch) {
    DataLease lease = MustAcquire(*manager, "w");
    EXPECT_EQ(Describe(lease), "[0, 4)@" + std::to_string(epoch));
    ASSERT_TRUE(manager->Complete(lease.lease_id(), "w", {}).ok());
  }
  EXPECT_FALSE(manager->end_of_data());
  EXPECT_EQ(manager->Stats().epoch, 5);
}

TEST_F(DataLeaseManagerTest, ExpiredLeaseGoesBackToTheFrontAndCannotBeCompleted) {
  auto manager = Make(Options(12, 4, 1));
  DataLease slow = MustAcquire(*manager, "worker/0#1");
  clock_.Advance(absl::Seconds(10));
  DataLease fast = MustAcquire(*manager, "worker/1#1");
  clock_.Advance(absl::Seconds(20));  // slow's deadline, not fast's

  std::vector<DataLease> expired = manager->ExpireLeases();
  ASSERT_THAT(expired, SizeIs(1));
  EXPECT_EQ(expired[0].lease_id(), slow.lease_id());
  EXPECT_EQ(Describe(MustAcquire(*manager, "worker/1#1")), "[0, 4)@0");

  absl::Status late = manager->Complete(slow.lease_id(), "worker/0#1", {});
  EXPECT_EQ(late.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(late.message(), HasSubstr("handed out again"));
  EXPECT_TRUE(manager->Complete(fast.lease_id(), "worker/1#1", {}).ok());
}

TEST_F(DataLeaseManagerTest, LeasesExpireWithoutATicker) {
  auto manager = Make(Options(8, 4, 1));
  DataLease a = MustAcquire(*manager, "w0");
  MustAcquire(*manager, "w1");
  clock_.Advance(absl::Seconds(30));
  // Acquire itself notices both expiries and hands the oldest range first.
  EXPECT_EQ(Describe(MustAcquire(*manager, "w2")), "[0, 4)@0");
  EXPECT_EQ(Describe(MustAcquire(*manager, "w2")), "[4, 8)@0");
  EXPECT_EQ(manager->Complete(a.lease_id(), "w0", {}).code(), absl::StatusCode::kNotFound);
}

TEST_F(DataLeaseManagerTest, AmongThousandsOfLeasesExactlyTheDueOnesExpireInLeaseOrder) {
  // A worker per lease, as a cluster of thousands of workers holds them:
  // leases handed out a millisecond apart, every third completed.
  constexpr int kLeases = 6000;
  auto manager = Make(Options(int64_t{kLeases} * 4, 4, 1));
  std::vector<DataLease> leases;
  for (int i = 0; i < kLeases; ++i) {
    leases.push_back(MustAcquire(*manager, "worker/" + std::to_string(i) + "#1"));
    clock_.Advance(absl::Milliseconds(1));
  }
  for (int i = 0; i < kLeases; i += 3) {
    ASSERT_TRUE(
        manager->Complete(leases[i].lease_id(), "worker/" + std::to_string(i) + "#1", {}).ok());
  }
  // 30 s after the first lease: those handed out in the first 2 s are due.
  clock_.Advance(absl::Seconds(30) - absl::Milliseconds(kLeases) + absl::Milliseconds(1999));
  const std::vector<DataLease> expired = manager->ExpireLeases();
  std::vector<int64_t> want;
  for (int i = 0; i < 2000; ++i) {
    if (i % 3 != 0) want.push_back(leases[i].lease_id());
  }
  std::vector<int64_t> got;
  for (const DataLease& lease : expired) got.push_back(lease.lease_id());
  EXPECT_EQ(got, want);
  EXPECT_THAT(manager->ExpireLeases(), SizeIs(0));
  // The rest are still held and complete.
  EXPECT_TRUE(manager->Complete(leases[2002].lease_id(), "worker/2002#1", {}).ok());
  EXPECT_EQ(manager->Complete(leases[1].lease_id(), "worker/1#1", {}).code(),
            absl::StatusCode::kNotFound);
  // The expired ranges come back first, the oldest at the front.
  EXPECT_EQ(Describe(MustAcquire(*manager, "worker/x#1")), Describe(leases[1]));
}

TEST_F(DataLeaseManagerTest, LostWorkersLeasesGoBackToTheFront) {
  auto manager = Make(Options(16, 4, 1));
  DataLease a = MustAcquire(*manager, "worker/0#1");
  MustAcquire(*manager, "worker/1#1");
  DataLease c = MustAcquire(*manager, "worker/0#1");
  EXPECT_EQ(manager->ReleaseHolder("worker/0#1"), 2);
  EXPECT_EQ(manager->ReleaseHolder("worker/0#1"), 0);
  EXPECT_EQ(Describe(MustAcquire(*manager, "worker/2#1")), "[0, 4)@0");
  EXPECT_EQ(Describe(MustAcquire(*manager, "worker/2#1")), "[8, 12)@0");
  EXPECT_EQ(Describe(MustAcquire(*manager, "worker/2#1")), "[12, 16)@0");
  EXPECT_EQ(manager->Complete(a.lease_id(), "worker/0#1", {}).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(manager->Complete(c.lease_id(), "worker/0#1", {}).code(), absl::StatusCode::kNotFound);
}

TEST_F(DataLeaseManagerTest, LostWorkersTrainedRecordsAreFinishedAndOnlyTheRestComesBack) {
  auto manager = Make(Options(16, 8, 1));
  DataLease a = MustAcquire(*manager, "worker/0#1");
  DataLease b = MustAcquire(*manager, "worker/1#1");
  ASSERT_THAT(manager->LeasesOf("worker/0#1"), SizeIs(1));
  EXPECT_EQ(manager->LeasesOf("worker/0#1")[0].lease_id(), a.lease_id());
  EXPECT_THAT(manager->LeasesOf("worker/2#1"), IsEmpty());
  // The shards applied [0, 3) and [5, 6) of a (a stale batch in between);
  // a range reaching past the lease is clipped to it.
  ASSERT_TRUE(manager
                  ->HandBackUntrained(a.lease_id(), "worker/0#1",
                                      {Records(0, 3), Records(5, 6), Records(7, 12)})
                  .ok());
  EXPECT_EQ(Describe(manager->Position()), "epoch 0: [0, 3) [5, 6) [7, 8)");
  EXPECT_EQ(Describe(MustAcquire(*manager, "worker/2#1")), "[3, 5)@0");
  EXPECT_EQ(Describe(MustAcquire(*manager, "worker/2#1")), "[6, 7)@0");
  EXPECT_EQ(manager->Acquire("worker/2#1").status().code(), absl::StatusCode::kUnavailable);
  // The lease is gone: a second hand-back or a completion is NotFound.
  EXPECT_EQ(manager->HandBackUntrained(a.lease_id(), "worker/0#1", {}).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(manager->HandBackUntrained(b.lease_id(), "worker/0#1", {}).code(),
            absl::StatusCode::kNotFound);
  // Nothing trained: the whole lease comes back.
  ASSERT_TRUE(manager->HandBackUntrained(b.lease_id(), "worker/1#1", {}).ok());
  EXPECT_EQ(Describe(MustAcquire(*manager, "worker/2#1")), "[8, 16)@0");
}

TEST_F(DataLeaseManagerTest, OverlappingTrainedRangesAreRefusedAndChangeNothing) {
  auto manager = Make(Options(16, 8, 1));
  DataLease a = MustAcquire(*manager, "w");
  EXPECT_EQ(manager->HandBackUntrained(a.lease_id(), "w", {Records(0, 4), Records(2, 6)}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(manager->LeasesOf("w"), SizeIs(1));
  EXPECT_EQ(Describe(manager->Position()), "epoch 0:");
}

TEST_F(DataLeaseManagerTest, PositionCarriesTheNextEpochAndRestoreResumesIt) {
  auto manager = Make(Options(8, 4, 3));
  DataLease a = MustAcquire(*manager, "w0");
  MustAcquire(*manager, "w1");
  DataLease c = MustAcquire(*manager, "w2");  // epoch 1, while epoch 0 finishes
  ASSERT_TRUE(manager->Complete(c.lease_id(), "w2", {}).ok());
  ASSERT_TRUE(manager->Complete(a.lease_id(), "w0", {}).ok());
  DataPosition position = manager->Position();
  EXPECT_EQ(Describe(position), "epoch 0: [0, 4)");
  ASSERT_EQ(position.next_epoch_finished_size(), 1);
  EXPECT_EQ(position.next_epoch_finished(0).end(), 4);

  auto restored = Make(Options(8, 4, 3));
  ASSERT_TRUE(restored->RestoreFrom(position).ok());
  EXPECT_EQ(Describe(MustAcquire(*restored, "w")), "[4, 8)@0");
  // Epoch 1's finished range is not handed out again.
  EXPECT_EQ(Describe(MustAcquire(*restored, "w")), "[4, 8)@1");
  EXPECT_EQ(restored->Acquire("w").status().code(), absl::StatusCode::kUnavailable);

  DataPosition bad = position;
  *bad.add_next_epoch_finished() = Records(2, 9);
  absl::Status refused = Make(Options(8, 4, 3))->RestoreFrom(bad);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("next_epoch_finished[1]"));
  // The last epoch has no next one: its next_epoch_finished is ignored.
  DataPosition last = position;
  last.set_epoch(2);
  ASSERT_TRUE(restored->RestoreFrom(last).ok());
  EXPECT_EQ(Describe(MustAcquire(*restored, "w")), "[4, 8)@2");
}

TEST_F(DataLeaseManagerTest, ReturnedRecordsAreNotLostAndComeFirst) {
  auto manager = Make(Options(12, 6, 1));
  DataLease lease = MustAcquire(*manager, "w");
  ASSERT_TRUE(manager->Complete(lease.lease_id(), "w", {Records(4, 5), Records(1, 3)}).ok());
  EXPECT_EQ(Describe(manager->Position()), "epoch 0: [0, 1) [3, 4) [5, 6)");
  EXPECT_EQ(Describe(MustAcquire(*manager, "w")), "[1, 3)@0");
  EXPECT_EQ(Describe(MustAcquire(*manager, "w")), "[4, 5)@0");
  EXPECT_EQ(Describe(MustAcquire(*manager, "w")), "[6, 12)@0");
}

TEST_F(DataLeaseManagerTest, OnlyTheHolderCompletesALease) {
  auto manager = Make(Options(8, 4, 1));
  DataLease lease = MustAcquire(*manager, "worker/0#1");
  absl::Status status = manager->Complete(lease.lease_id(), "worker/0#2", {});
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("not held by worker/0#2"));
  EXPECT_TRUE(manager->Complete(lease.lease_id(), "worker/0#1", {}).ok());
  EXPECT_EQ(manager->Complete(lease.lease_id(), "worker/0#1", {}).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(manager->Complete(12345, "worker/0#1", {}).code(), absl::StatusCode::kNotFound);
}

TEST_F(DataLeaseManagerTest, BadReturnedRangesAreRefusedAndChangeNothing) {
  auto manager = Make(Options(8, 4, 1));
  DataLease lease = MustAcquire(*manager, "w");
  const std::vector<std::vector<RecordRange>> bad = {{Records(2, 2)},
                                                     {Records(3, 1)},
                                                     {Records(2, 5)},
                                                     {Records(-1, 1)},
                                                     {Records(0, 2), Records(1, 3)}};
  for (const auto& returned : bad) {
    EXPECT_EQ(manager->Complete(lease.lease_id(), "w", returned).code(),
              absl::StatusCode::kInvalidArgument);
  }
  EXPECT_THAT(manager->Position().finished(), IsEmpty());
  EXPECT_TRUE(manager->Complete(lease.lease_id(), "w", {Records(0, 4)}).ok());
  EXPECT_THAT(manager->Position().finished(), IsEmpty());
  EXPECT_EQ(Describe(MustAcquire(*manager, "w")), "[0, 4)@0");
}

TEST_F(DataLeaseManagerTest, NextEpochIsHandedOutWhileTheLastLeasesFinish) {
  auto manager = Make(Options(8, 4, 0));
  DataLease a = MustAcquire(*manager, "w0");
  DataLease b = MustAcquire(*manager, "w1");
  DataLease c = MustAcquire(*manager, "w2");
  EXPECT_EQ(Describe(c), "[0, 4)@1");
  ASSERT_TRUE(manager->Complete(c.lease_id(), "w2", {}).ok());
  ASSERT_TRUE(manager->Complete(a.lease_id(), "w0", {}).ok());
  // Epoch 0 still has b outstanding: the position stays in epoch 0.
  EXPECT_EQ(Describe(manager->Position()), "epoch 0: [0, 4)");
  EXPECT_EQ(Describe(MustAcquire(*manager, "w2")), "[4, 8)@1");
  // Never two epochs ahead.
  EXPECT_EQ(manager->Acquire("w0").status().code(), absl::StatusCode::kUnavailable);
  // A range returned from the older epoch comes before the newer epoch.
  ASSERT_TRUE(manager->Complete(b.lease_id(), "w1", {Records(6, 8)}).ok());
  EXPECT_EQ(Describe(MustAcquire(*manager, "w0")), "[6, 8)@0");
}

TEST_F(DataLeaseManagerTest, WithoutOverlapTheEpochBoundaryWaits) {
  DataLeaseOptions options = Options(8, 4, 0);
  options.overlap_epochs = false;
  auto manager = Make(options);
  DataLease a = MustAcquire(*manager, "w0");
  DataLease b = MustAcquire(*manager, "w1");
  EXPECT_EQ(manager->Acquire("w2").status().code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(manager->Complete(a.lease_id(), "w0", {}).ok());
  ASSERT_TRUE(manager->Complete(b.lease_id(), "w1", {}).ok());
  EXPECT_EQ(Describe(MustAcquire(*manager, "w2")), "[0, 4)@1");
}

TEST_F(DataLeaseManagerTest, PositionAtTheEndIsTheLastEpochAllFinished) {
  auto manager = Make(Options(4, 4, 2));
  for (int i = 0; i < 2; ++i) {
    DataLease lease = MustAcquire(*manager, "w");
    ASSERT_TRUE(manager->Complete(lease.lease_id(), "w", {}).ok());
  }
  ASSERT_TRUE(manager->end_of_data());
  DataPosition position = manager->Position();
  EXPECT_EQ(Describe(position), "epoch 1: [0, 4)");
  EXPECT_EQ(position.num_records(), 4);

  auto restored = Make(Options(4, 4, 2));
  ASSERT_TRUE(restored->RestoreFrom(position).ok());
  EXPECT_TRUE(restored->end_of_data());
}

TEST_F(DataLeaseManagerTest, RestoreResumesWithTheUnfinishedRanges) {
  auto manager = Make(Options(20, 5, 3));
  DataPosition position;
  position.set_epoch(1);
  position.set_num_records(20);
  *position.add_finished() = Records(0, 3);
  *position.add_finished() = Records(10, 20);
  ASSERT_TRUE(manager->RestoreFrom(position).ok());
  EXPECT_EQ(Describe(manager->Position()), "epoch 1: [0, 3) [10, 20)");
  EXPECT_EQ(Describe(MustAcquire(*manager, "w")), "[3, 8)@1");
  EXPECT_EQ(Describe(MustAcquire(*manager, "w")), "[8, 10)@1");
  EXPECT_EQ(Describe(MustAcquire(*manager, "w")), "[0, 5)@2");
}

TEST_F(DataLeaseManagerTest, LeaseIdsDoNotRepeatAcrossCoordinatorRestarts) {
  DataLeaseOptions options = Options(8, 4, 1);
  options.first_lease_id = 1000;
  auto before = Make(options);
  EXPECT_EQ(MustAcquire(*before, "w").lease_id(), 1000);
  EXPECT_EQ(MustAcquire(*before, "w").lease_id(), 1001);
  // By default each manager starts somewhere else at random.
  EXPECT_NE(MustAcquire(*Make(Options(8, 4, 1)), "w").lease_id(),
            MustAcquire(*Make(Options(8, 4, 1)), "w").lease_id());
}

TEST_F(DataLeaseManagerTest, RestoreVoidsOutstandingLeases) {
  auto manager = Make(Options(8, 4, 1));
  DataLease lease = MustAcquire(*manager, "w");
  ASSERT_TRUE(manager->RestoreFrom(DataPosition()).ok());
  EXPECT_EQ(manager->Complete(lease.lease_id(), "w", {}).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Describe(MustAcquire(*manager, "w")), "[0, 4)@0");
}

TEST_F(DataLeaseManagerTest, RestoreFromAFinishedEpochMovesOn) {
  auto manager = Make(Options(8, 4, 3));
  DataPosition position;
  position.set_epoch(0);
  position.set_num_records(8);
  *position.add_finished() = Records(0, 8);
  ASSERT_TRUE(manager->RestoreFrom(position).ok());
  EXPECT_EQ(manager->Position().epoch(), 1);
  position.set_epoch(5);  // beyond the 3 epochs: a job resumed with fewer
  ASSERT_TRUE(manager->RestoreFrom(position).ok());
  EXPECT_TRUE(manager->end_of_data());
}

TEST_F(DataLeaseManagerTest, RestoreRefusesAPositionForOtherDataOrMalformed) {
  auto manager = Make(Options(8, 4, 1));
  DataLease lease = MustAcquire(*manager, "w");
  DataPosition other;
  other.set_num_records(9);
  *other.add_finished() = Records(0, 2);
  absl::Status status = manager->RestoreFrom(other);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("counts 9 records but the training data has 8"));

  const std::vector<std::vector<RecordRange>> bad = {
      {Records(3, 3)}, {Records(0, 9)}, {Records(-1, 2)}, {Records(0, 4), Records(3, 5)}};
  for (const auto& finished : bad) {
    DataPosition position;
    position.set_num_records(8);
    for (const RecordRange& r : finished) *position.add_finished() = r;
    EXPECT_EQ(manager->RestoreFrom(position).code(), absl::StatusCode::kInvalidArgument)
        << Describe(position);
  }
  DataPosition negative;
  negative.set_epoch(-1);
  EXPECT_EQ(manager->RestoreFrom(negative).code(), absl::StatusCode::kInvalidArgument);
  // Nothing changed: the lease is still good.
  EXPECT_TRUE(manager->Complete(lease.lease_id(), "w", {}).ok());
}

// A seeded random schedule of workers acquiring, completing (sometimes
// returning records), stalling past deadlines, being lost and restarting,
// and of the coordinator restarting from its last checkpoint position.
// Tracks, per epoch and record, how many times the record was finished, and
// checks that no record is ever leased while leased elsewhere or already
// finished, that late or stale completions are refused, and that in the end
// every record of every epoch was finished exactly once.
class LeaseSimulation {
 public:
  struct Config {
    uint32_t seed = 1;
    bool overlap_epochs = true;
    bool restarts = false;  // coordinator restarts from checkpoints
  };

  explicit LeaseSimulation(Config config) : config_(config), random_(config.seed) {
    options_ = Options(kRecords, kChunk, kEpochs);
    options_.lease_timeout = absl::Seconds(10);
    options_.overlap_epochs = config.overlap_epochs;
    finished_.assign(kEpochs, std::vector<int>(kRecords, 0));
    leased_.assign(kEpochs, std::vector<bool>(kRecords, false));
    for (int w = 0; w < kWorkers; ++w) workers_.push_back({Holder(w, 1), 1, {}, false});
    manager_ = Create();
    checkpoint_ = manager_->Position();
  }

  void Run() {
    int steps = 0;
    while (!AllWorkersDone()) {
      ASSERT_LT(++steps, 200000) << "no end of data; position " << Describe(manager_->Position());
      ForgetExpired();
      const int w = Pick(kWorkers);
      const int action = Pick(100);
      if (action < 40) {
        Acquire(w);
      } else if (action < 80) {
        Complete(w);
      } else if (action < 90) {
        clock_.Advance(absl::Milliseconds(Pick(3000)));
      } else if (action < 93) {
        LoseWorker(w);
      } else if (action < 97 || !config_.restarts) {
        checkpoint_ = manager_->Position();
      } else {
        RestartCoordinator();
      }
      if (HasFatalFailure()) return;
    }
    EXPECT_TRUE(manager_->end_of_data());
    // The schedule exercised what it is meant to.
    EXPECT_GT(events_.refused_void, 0);
    EXPECT_GT(events_.returned, 0);
    EXPECT_GT(events_.lost, 0);
    EXPECT_EQ(events_.ahead_of_position > 0, config_.overlap_epochs);
    EXPECT_EQ(events_.restarts > 0, config_.restarts);
    for (int e = 0; e < kEpochs; ++e) {
      for (int r = 0; r < kRecords; ++r) {
        ASSERT_EQ(finished_[e][r], 1) << "record " << r << " of epoch " << e;
      }
    }
  }

 private:
  static constexpr int kRecords = 997;
  static constexpr int kChunk = 37;
  static constexpr int kEpochs = 3;
  static constexpr int kWorkers = 5;

  struct Held {
    DataLease lease;
    bool void_ = false;  // expired, released or voided by a restore
  };
  struct Worker {
    std::string holder;
    int incarnation;
    std::vector<Held> held;
    bool done;
  };

  static std::string Holder(int w, int incarnation) {
    return "worker/" + std::to_string(w) + "#" + std::to_string(incarnation);
  }
  int Pick(int n) { return static_cast<int>(random_() % n); }
  static bool HasFatalFailure() { return ::testing::Test::HasFatalFailure(); }

  std::unique_ptr<DataLeaseManager> Create() {
    // As the coordinator does: ids differ from the previous coordinator's.
    options_.first_lease_id = 1 + Pick(1 << 30);
    absl::StatusOr<std::unique_ptr<DataLeaseManager>> manager =
        DataLeaseManager::Create(clock_, options_);
    EXPECT_TRUE(manager.ok()) << manager.status();
    return std::move(*manager);
  }

  bool AllWorkersDone() const {
    for (const Worker& w : workers_) {
      if (!w.done) return false;
    }
    return true;
  }

  void Unmark(const DataLease& lease) {
    for (int64_t r = lease.range().begin(); r < lease.range().end(); ++r) {
      leased_[lease.epoch()][r] = false;
    }
  }

  // The manager expires a lease once now >= deadline; the model does too.
  void ForgetExpired() {
    const int64_t now_ms = absl::ToUnixMillis(clock_.Now());
    for (Worker& w : workers_) {
      for (Held& h : w.held) {
        if (!h.void_ && h.lease.deadline_unix_ms() <= now_ms) {
          h.void_ = true;
          Unmark(h.lease);
        }
      }
    }
  }

  void Acquire(int w) {
    Worker& worker = workers_[w];
    absl::StatusOr<DataLease> lease = manager_->Acquire(worker.holder);
    if (absl::IsUnavailable(lease.status())) return;
    ASSERT_TRUE(lease.ok()) << lease.status();
    if (lease->end_of_data()) {
      worker.done = true;
      return;
    }
    worker.done = false;
    if (lease->epoch() > manager_->Position().epoch()) ++events_.ahead_of_position;
    const RecordRange& range = lease->range();
    ASSERT_GE(lease->epoch(), 0);
    ASSERT_LT(lease->epoch(), kEpochs);
    ASSERT_GE(range.begin(), 0);
    ASSERT_LE(range.end(), kRecords);
    ASSERT_GT(range.end(), range.begin());
    ASSERT_LE(range.end() - range.begin(), kChunk);
    for (int64_t r = range.begin(); r < range.end(); ++r) {
      ASSERT_FALSE(leased_[lease->epoch()][r]) << "record " << r << " leased twice";
      ASSERT_EQ(finished_[lease->epoch()][r], 0) << "record " << r << " handed out again";
      leased_[lease->epoch()][r] = true;
    }
    worker.held.push_back({*lease, false});
  }

  void Complete(int w) {
    Worker& worker = workers_[w];
    if (worker.held.empty()) return;
    const size_t index = Pick(static_cast<int>(worker.held.size()));
    const Held held = worker.held[index];
    worker.held.erase(worker.held.begin() + index);
    const RecordRange& range = held.lease.range();

    // Sometimes a late gradient: return one sub-range.
    std::vector<RecordRange> returned;
    if (Pick(10) < 3) {
      const int64_t size = range.end() - range.begin();
      const int64_t begin = range.begin() + Pick(static_cast<int>(size));
      const int64_t end = begin + 1 + Pick(static_cast<int>(range.end() - begin));
      returned.push_back(Records(begin, end));
    }
    absl::Status status = manager_->Complete(held.lease.lease_id(), worker.holder, returned);
    if (held.void_) {
      ASSERT_EQ(status.code(), absl::StatusCode::kNotFound)
          << "a void lease " << Describe(held.lease) << " was accepted";
      ++events_.refused_void;
      return;
    }
    ASSERT_TRUE(status.ok()) << status << " for " << Describe(held.lease);
    Unmark(held.lease);
    if (!returned.empty()) ++events_.returned;
    for (int64_t r = range.begin(); r < range.end(); ++r) {
      const bool back = !returned.empty() && r >= returned[0].begin() && r < returned[0].end();
      if (!back) ++finished_[held.lease.epoch()][r];
    }
  }

  // The worker's process dies; membership releases its leases and it comes
  // back as a new incarnation. The dead process's leases stay "held" by a
  // zombie that may still try to complete them: they must be refused.
  void LoseWorker(int w) {
    Worker& worker = workers_[w];
    manager_->ReleaseHolder(worker.holder);
    ++events_.lost;
    for (Held& h : worker.held) {
      if (!h.void_) Unmark(h.lease);
    }
    zombies_.push_back(worker);
    worker.holder = Holder(w, ++worker.incarnation);
    worker.held.clear();
    worker.done = false;
    for (Held& h : zombies_.back().held) {
      absl::Status status = manager_->Complete(h.lease.lease_id(), zombies_.back().holder, {});
      ASSERT_EQ(status.code(), absl::StatusCode::kNotFound) << "a lost worker's lease was accepted";
    }
  }

  // The coordinator restarts from the last checkpoint: completions since
  // then are lost with it, and every lease out there is void.
  void RestartCoordinator() {
    manager_ = Create();
    ++events_.restarts;
    ASSERT_TRUE(manager_->RestoreFrom(checkpoint_).ok()) << Describe(checkpoint_);
    for (int e = 0; e < kEpochs; ++e) {
      std::fill(leased_[e].begin(), leased_[e].end(), false);
      std::fill(finished_[e].begin(), finished_[e].end(), e < checkpoint_.epoch() ? 1 : 0);
    }
    if (checkpoint_.epoch() < kEpochs) {
      for (const RecordRange& r : checkpoint_.finished()) {
        for (int64_t i = r.begin(); i < r.end(); ++i) finished_[checkpoint_.epoch()][i] = 1;
      }
    }
    // The next epoch's ranges finished early (overlap) are kept too.
    if (checkpoint_.epoch() + 1 < kEpochs) {
      for (const RecordRange& r : checkpoint_.next_epoch_finished()) {
        for (int64_t i = r.begin(); i < r.end(); ++i) finished_[checkpoint_.epoch() + 1][i] = 1;
      }
    }
    for (Worker& w : workers_) {
      for (Held& h : w.held) h.void_ = true;
      w.done = false;
    }
  }

  struct Events {
    int refused_void = 0;       // late, stale or voided completions refused
    int returned = 0;           // completions that returned records
    int lost = 0;               // workers lost
    int restarts = 0;           // coordinator restarts
    int ahead_of_position = 0;  // leases of the epoch after the position's
  };

  const Config config_;
  std::mt19937 random_;
  Events events_;
  FakeClock clock_;
  DataLeaseOptions options_;
  std::unique_ptr<DataLeaseManager> manager_;
  DataPosition checkpoint_;
  std::vector<Worker> workers_;
  std::vector<Worker> zombies_;
  // [epoch][record]
  std::vector<std::vector<int>> finished_;
  std::vector<std::vector<bool>> leased_;
};

TEST(LeaseSizeForTest, AQuarterOfEachWorkersShareWithinBounds) {
  EXPECT_EQ(LeaseSizeFor(60000, 2), 7500);
  EXPECT_EQ(LeaseSizeFor(60000, 1), 15000);
  EXPECT_EQ(LeaseSizeFor(600, 2), 1024);        // small data: one lease holds it
  EXPECT_EQ(LeaseSizeFor(10000000, 2), 16384);  // large data: bounded
  EXPECT_EQ(LeaseSizeFor(60000, 0), 15000);     // workers not known: as one
}

TEST(LeaseSizeForTest, StreamedDataGetsWholeShuffleWindows) {
  EXPECT_EQ(LeaseSizeFor(60000, 2, 8192), 8192);         // 7500, to the nearest window
  EXPECT_EQ(LeaseSizeFor(60000, 1, 4096), 16384);        // 15000
  EXPECT_EQ(LeaseSizeFor(600, 2, 8192), 8192);           // at least one
  EXPECT_EQ(LeaseSizeFor(10000000, 2, 100000), 100000);  // a window larger than the bound
}

TEST(DataLeasePropertyTest, EveryRecordOfEveryEpochIsFinishedExactlyOnce) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    for (bool overlap : {true, false}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + (overlap ? " overlapping" : " strict"));
      LeaseSimulation simulation({seed, overlap, /*restarts=*/false});
      simulation.Run();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(DataLeasePropertyTest, RestartFromAPositionNeitherSkipsNorRepeats) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    for (bool overlap : {true, false}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + (overlap ? " overlapping" : " strict"));
      LeaseSimulation simulation({seed, overlap, /*restarts=*/true});
      simulation.Run();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// ------------------------------------------------------------ sync slots --

DataLeaseOptions SlotOptions(int64_t num_records, int64_t chunk_size, int32_t slots,
                             int64_t per_batch) {
  DataLeaseOptions options = Options(num_records, chunk_size, 0);
  options.sync_slots = slots;
  options.records_per_batch = per_batch;
  return options;
}

// "[b, e)@epoch r<first_round>" of a slot's lease.
std::string DescribeSlotLease(const DataLease& lease) {
  return Describe(lease) + " r" +
         (lease.has_first_round() ? std::to_string(lease.first_round()) : std::string("-"));
}

TEST_F(DataLeaseManagerTest, SlotOptionsAreChecked) {
  EXPECT_EQ(DataLeaseManager::Create(clock_, SlotOptions(10, 4, -1, 2)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(DataLeaseManager::Create(clock_, SlotOptions(10, 4, 2, 0)).status().message(),
              HasSubstr("records per batch"));
  auto slotted = Make(SlotOptions(10, 4, 2, 2));
  EXPECT_EQ(slotted->Acquire("w0").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(slotted->AcquireForSlot("w0", 2).status().message(), HasSubstr("outside [0, 2)"));
  auto plain = Make(Options(10, 4, 1));
  EXPECT_EQ(plain->AcquireForSlot("w0", 0).status().code(), absl::StatusCode::kInvalidArgument);
}

// Which slot gets which range, and from which round, depends on the data
// and the rounds only: never on which worker asks first.
TEST_F(DataLeaseManagerTest, SlotsGetTheSameLeasesWhateverOrderTheyAskIn) {
  // 10 records, chunks of 4, batches of 2: per epoch [0, 4) [4, 8) [8, 10),
  // the last lease one round long.
  auto in_order = [&](const std::vector<int>& asks) {
    auto manager = Make(SlotOptions(10, 4, 2, 2));
    std::vector<std::vector<std::string>> got(2);
    for (int slot : asks) {
      absl::StatusOr<DataLease> lease = manager->AcquireForSlot("w" + std::to_string(slot), slot);
      EXPECT_TRUE(lease.ok()) << lease.status();
      if (!lease.ok()) break;
      got[slot].push_back(DescribeSlotLease(*lease));
      EXPECT_TRUE(manager->Complete(lease->lease_id(), "w" + std::to_string(slot), {}).ok());
    }
    return got;
  };
  const std::vector<std::vector<std::string>> a = in_order({0, 1, 0, 1, 0, 1, 0, 1});
  const std::vector<std::vector<std::string>> b = in_order({1, 1, 0, 1, 0, 0, 1, 0});
  EXPECT_EQ(a, b);
  // The next range goes to the slot whose leases end soonest, ties to the
  // lower slot.
  EXPECT_THAT(a[0],
              ::testing::ElementsAre("[0, 4)@0 r0", "[8, 10)@0 r2", "[4, 8)@1 r3", "[0, 4)@2 r5"));
  EXPECT_THAT(a[1],
              ::testing::ElementsAre("[4, 8)@0 r0", "[0, 4)@1 r2", "[8, 10)@1 r4", "[4, 8)@2 r5"));
}

TEST_F(DataLeaseManagerTest, ALostHoldersLeaseWaitsForItsSlotWithItsRounds) {
  auto manager = Make(SlotOptions(100, 10, 2, 5));
  const DataLease first = manager->AcquireForSlot("worker/1#1", 1).value();
  EXPECT_EQ(DescribeSlotLease(first), "[10, 20)@0 r0");  // [0, 10) went to slot 0
  EXPECT_EQ(manager->ReleaseHolder("worker/1#1"), 1);
  // Nobody else gets it: slot 0 has its own.
  EXPECT_EQ(DescribeSlotLease(manager->AcquireForSlot("worker/0#1", 0).value()), "[0, 10)@0 r0");
  // The slot's next holder gets the same records from the same round; the
  // lost holder can no longer complete it.
  const DataLease again = manager->AcquireForSlot("worker/1#2", 1).value();
  EXPECT_EQ(DescribeSlotLease(again), "[10, 20)@0 r0");
  EXPECT_EQ(manager->Complete(first.lease_id(), "worker/1#1", {}).code(),
            absl::StatusCode::kNotFound);
  // An expired lease waits for its slot too.
  clock_.Advance(absl::Seconds(31));
  EXPECT_THAT(manager->ExpireLeases(), SizeIs(2));
  EXPECT_EQ(DescribeSlotLease(manager->AcquireForSlot("worker/1#2", 1).value()), "[10, 20)@0 r0");
  EXPECT_TRUE(manager->Complete(again.lease_id(), "worker/1#2", {}).ok());
  EXPECT_EQ(DescribeSlotLease(manager->AcquireForSlot("worker/1#2", 1).value()), "[30, 40)@0 r2");
}

TEST_F(DataLeaseManagerTest, ASlotsLeaseTakenUpAgainHasTheNewHoldersDeadline) {
  auto manager = Make(SlotOptions(100, 10, 2, 5));
  manager->AcquireForSlot("worker/1#1", 1).value();
  EXPECT_EQ(manager->ReleaseHolder("worker/1#1"), 1);
  // Unheld, it never expires.
  clock_.Advance(absl::Seconds(20));
  EXPECT_THAT(manager->ExpireLeases(), SizeIs(0));
  const DataLease again = manager->AcquireForSlot("worker/1#2", 1).value();
  EXPECT_EQ(again.deadline_unix_ms(), absl::ToUnixMillis(clock_.Now() + absl::Seconds(30)));
  // Past the first holder's deadline, not the second's.
  clock_.Advance(absl::Seconds(15));
  EXPECT_THAT(manager->ExpireLeases(), SizeIs(0));
  clock_.Advance(absl::Seconds(15));
  ASSERT_THAT(manager->ExpireLeases(), SizeIs(1));
  EXPECT_EQ(manager->Complete(again.lease_id(), "worker/1#2", {}).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(DataLeaseManagerTest, ASlotsLeaseIsNotCutByTrainedRecords) {
  auto manager = Make(SlotOptions(100, 10, 2, 5));
  const DataLease lease = manager->AcquireForSlot("worker/1#1", 1).value();
  EXPECT_EQ(manager->HandBackUntrained(lease.lease_id(), "worker/1#1", {Records(10, 15)}).code(),
            absl::StatusCode::kFailedPrecondition);
  // It still waits whole for the slot's next holder, from its first round.
  EXPECT_EQ(manager->ReleaseHolder("worker/1#1"), 1);
  EXPECT_EQ(DescribeSlotLease(manager->AcquireForSlot("worker/1#2", 1).value()), "[10, 20)@0 r0");
}

TEST_F(DataLeaseManagerTest, SlotsRestartAtTheRestoredRound) {
  auto manager = Make(SlotOptions(100, 10, 2, 5));
  manager->AcquireForSlot("w0", 0).value();
  DataPosition position;
  position.set_epoch(0);
  position.set_num_records(100);
  *position.add_finished() = Records(0, 40);
  ASSERT_TRUE(manager->RestoreFrom(position, 8).ok());
  EXPECT_EQ(DescribeSlotLease(manager->AcquireForSlot("w1", 1).value()), "[50, 60)@0 r8");
  EXPECT_EQ(DescribeSlotLease(manager->AcquireForSlot("w0", 0).value()), "[40, 50)@0 r8");
}

// A checkpoint at round 1 of two slots with leases of two rounds each:
// round 0's batches are applied ([0, 5) and [10, 15)), the rest of each
// lease is not. Restored, each slot trains the rest of its own lease from
// round 1 and then what a run that never stopped would have dealt it.
TEST_F(DataLeaseManagerTest, ARestoreGivesEachSlotTheRestOfItsLeasesInItsRounds) {
  const DataLeaseOptions options = SlotOptions(100, 10, 2, 5);
  auto running = Make(options);
  std::vector<DataLease> held = {running->AcquireForSlot("w0", 0).value(),
                                 running->AcquireForSlot("w1", 1).value()};
  DataPosition position = running->Position();
  ASSERT_EQ(position.slot_leases_size(), 2);
  *position.add_finished() = Records(0, 5);
  *position.add_finished() = Records(10, 15);

  // Both go on from here: each slot completes its lease and takes the next.
  auto restored = Make(options);
  ASSERT_TRUE(restored->RestoreFrom(position, 1).ok());
  std::vector<std::vector<std::string>> went_on(2), came_back(2);
  for (int slot = 0; slot < 2; ++slot) {
    const std::string holder = "w" + std::to_string(slot);
    came_back[slot].push_back(DescribeSlotLease(restored->AcquireForSlot(holder, slot).value()));
  }
  for (int i = 0; i < 2; ++i) {
    for (int slot = 0; slot < 2; ++slot) {
      const std::string holder = "w" + std::to_string(slot);
      ASSERT_TRUE(running->Complete(held[slot].lease_id(), holder, {}).ok());
      held[slot] = running->AcquireForSlot(holder, slot).value();
      went_on[slot].push_back(DescribeSlotLease(held[slot]));
      const DataLease now = restored->AcquireForSlot(holder, slot).value();
      ASSERT_TRUE(restored->Complete(now.lease_id(), holder, {}).ok());
      came_back[slot].push_back(DescribeSlotLease(restored->AcquireForSlot(holder, slot).value()));
    }
  }
  EXPECT_THAT(came_back[0], ::testing::ElementsAre("[5, 10)@0 r1", "[20, 30)@0 r2", "[40, 50)@0 r4"));
  EXPECT_THAT(came_back[1], ::testing::ElementsAre("[15, 20)@0 r1", "[30, 40)@0 r2", "[50, 60)@0 r4"));
  EXPECT_EQ(std::vector<std::string>(came_back[0].begin() + 1, came_back[0].end()), went_on[0]);
  EXPECT_EQ(std::vector<std::string>(came_back[1].begin() + 1, came_back[1].end()), went_on[1]);

  // On one slot, slot 1's rest goes back to the front of the queue, dealt
  // with the records after it.
  auto fewer = Make(SlotOptions(100, 10, 1, 5));
  ASSERT_TRUE(fewer->RestoreFrom(position, 1).ok());
  const DataLease own = fewer->AcquireForSlot("w0", 0).value();
  EXPECT_EQ(DescribeSlotLease(own), "[5, 10)@0 r1");
  ASSERT_TRUE(fewer->Complete(own.lease_id(), "w0", {}).ok());
  EXPECT_EQ(DescribeSlotLease(fewer->AcquireForSlot("w0", 0).value()), "[15, 25)@0 r2");

  // A slot lease that names records out of the data changes nothing.
  DataPosition bad = position;
  bad.mutable_slot_leases(1)->mutable_range()->set_end(101);
  EXPECT_THAT(restored->RestoreFrom(bad, 1).message(), HasSubstr("slot_leases[1]"));
}

// 10 records of one epoch, chunks of 4, batches of 2, three slots: slot 2
// gets [8, 10), one round, and then nothing; rounds from 1 on lack its
// batch, so they can never be applied.
TEST_F(DataLeaseManagerTest, ASlotWhoseShareOfTheLastEpochRanOutEndsTheRounds) {
  DataLeaseOptions options = SlotOptions(10, 4, 3, 2);
  options.epochs = 1;
  auto manager = Make(options);
  std::vector<DataLease> leases;
  for (int slot = 0; slot < 3; ++slot) {
    leases.push_back(manager->AcquireForSlot("w" + std::to_string(slot), slot).value());
  }
  EXPECT_EQ(DescribeSlotLease(leases[2]), "[8, 10)@0 r0");
  EXPECT_FALSE(manager->sync_rounds_end().has_value());
  ASSERT_TRUE(manager->Complete(leases[2].lease_id(), "w2", {}).ok());
  absl::StatusOr<DataLease> dry = manager->AcquireForSlot("w2", 2);
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_TRUE(dry->end_of_data());
  EXPECT_EQ(manager->sync_rounds_end(), 1);
  // The other slots still train theirs; the data is not all finished.
  EXPECT_FALSE(manager->end_of_data());
  // A restore starts the rounds over.
  DataPosition position;
  position.set_num_records(10);
  ASSERT_TRUE(manager->RestoreFrom(position, 0).ok());
  EXPECT_FALSE(manager->sync_rounds_end().has_value());
}

TEST_F(DataLeaseManagerTest, WithoutAnEpochLimitASlotNeverRunsDry) {
  auto manager = Make(SlotOptions(10, 4, 3, 2));
  for (int i = 0; i < 12; ++i) {
    for (int slot = 0; slot < 3; ++slot) {
      const std::string holder = "w" + std::to_string(slot);
      absl::StatusOr<DataLease> lease = manager->AcquireForSlot(holder, slot);
      ASSERT_TRUE(lease.ok()) << lease.status();
      ASSERT_FALSE(lease->end_of_data()) << "pass " << i << ", slot " << slot;
      ASSERT_TRUE(manager->Complete(lease->lease_id(), holder, {}).ok());
    }
  }
  EXPECT_FALSE(manager->sync_rounds_end().has_value());
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
