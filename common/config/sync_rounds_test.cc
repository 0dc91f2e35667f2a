#include "common/config/sync_rounds.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TrainingSpec Training(UpdateMode mode, int32_t replicas_to_aggregate) {
  TrainingSpec training;
  training.set_update_mode(mode);
  training.set_replicas_to_aggregate(replicas_to_aggregate);
  return training;
}

TEST(SyncRoundsTest, ZeroReplicasMeansEveryWorker) {
  EXPECT_EQ(ReplicasToAggregateOf(Training(UPDATE_MODE_SYNC, 0), 4), 4);
  EXPECT_EQ(ReplicasToAggregateOf(Training(UPDATE_MODE_SYNC, 3), 4), 3);
}

TEST(SyncRoundsTest, SyncRoundsOfEveryWorkerHaveASlotPerRank) {
  EXPECT_TRUE(RoundsHaveWorkerSlots(Training(UPDATE_MODE_SYNC, 0), 4));
  EXPECT_TRUE(RoundsHaveWorkerSlots(Training(UPDATE_MODE_SYNC, 4), 4));
}

TEST(SyncRoundsTest, BackupWorkersAndOtherModesHaveNoSlots) {
  EXPECT_FALSE(RoundsHaveWorkerSlots(Training(UPDATE_MODE_SYNC, 3), 4));
  EXPECT_FALSE(RoundsHaveWorkerSlots(Training(UPDATE_MODE_ASYNC, 0), 4));
  EXPECT_FALSE(RoundsHaveWorkerSlots(Training(UPDATE_MODE_BOUNDED_STALENESS, 0), 4));
  // Unset reads as the default mode, async.
  EXPECT_FALSE(RoundsHaveWorkerSlots(Training(UPDATE_MODE_UNSPECIFIED, 0), 4));
}

TEST(SyncRoundsTest, SyncRoundsOnSeveralShardsAreAgreed) {
  EXPECT_TRUE(RoundsAreAgreed(Training(UPDATE_MODE_SYNC, 0), 2));
  EXPECT_TRUE(RoundsAreAgreed(Training(UPDATE_MODE_SYNC, 1), 3));
  // One shard decides its rounds alone; other modes have none.
  EXPECT_FALSE(RoundsAreAgreed(Training(UPDATE_MODE_SYNC, 1), 1));
  EXPECT_FALSE(RoundsAreAgreed(Training(UPDATE_MODE_ASYNC, 0), 2));
}

}  // namespace
}  // namespace pstrain
