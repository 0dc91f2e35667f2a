#ifndef PSTRAIN_COMMON_DATA_EPOCH_SHUFFLE_H_
#define PSTRAIN_COMMON_DATA_EPOCH_SHUFFLE_H_

#include <cstdint>

#include "absl/types/span.h"

namespace pstrain {

// Puts `records` in epoch `epoch`'s order for `seed`. The order depends on
// nothing else, so every process that reads the same records (the workers of
// a cluster, the single-process trainer, a run resumed from a checkpoint)
// gets the same one; consecutive epochs get unrelated ones. Thread-safe.
void ShuffleForEpoch(uint64_t seed, int64_t epoch, absl::Span<int64_t> records);

// How an epoch reads its records.
enum class RecordOrder {
  kInSequence,
  kShuffled,  // ShuffleForEpoch
};

// Fills `order` with the records first, first + 1, ... in the order epoch
// `epoch` reads them (shuffled for `seed`, or in sequence).
void FillEpochOrder(int64_t first, RecordOrder how, uint64_t seed, int64_t epoch,
                    absl::Span<int64_t> order);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_EPOCH_SHUFFLE_H_
