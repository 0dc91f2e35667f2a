#ifndef PSTRAIN_COMMON_CONFIG_SYNC_ROUNDS_H_
#define PSTRAIN_COMMON_CONFIG_SYNC_ROUNDS_H_

#include <cstdint>

#include "protos/job.pb.h"

namespace pstrain {

// How a sync-mode job's rounds are made up, the one rule the coordinator,
// the parameter servers and the workers each act on.

// Gradients a sync round sums: training.replicas_to_aggregate, or every
// worker when it is 0.
int32_t ReplicasToAggregateOf(const TrainingSpec& training, int32_t num_workers);

// Sync mode with every worker in each round (no backup workers): round r
// has one slot per worker rank, and the data of each slot is fixed by the
// round, so r trains the same batches in every run with the same data and
// seed, also when another process takes a lost worker's rank up. The
// coordinator deals data leases to the slots (DataLease.first_round), the
// shards sum a round's slots in rank order and answer a second push for a
// filled slot DUPLICATE, and a worker aligns its batches with the round it
// pulled. With backup workers a round takes whichever gradients come
// first, and leases go to whoever asks.
bool RoundsHaveWorkerSlots(const TrainingSpec& training, int32_t num_workers);

// Sync mode on more than one parameter-server shard: the coordinator's
// round keeper decides which pushes form each round, and every shard
// applies exactly those (docs/design/sync_rounds.md). One shard decides
// its rounds alone.
bool RoundsAreAgreed(const TrainingSpec& training, int32_t num_shards);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_SYNC_ROUNDS_H_
