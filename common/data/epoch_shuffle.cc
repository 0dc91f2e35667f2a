#include "common/data/epoch_shuffle.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "common/random/split_mix.h"

namespace pstrain {

void ShuffleForEpoch(uint64_t seed, int64_t epoch, absl::Span<int64_t> records) {
  // The mix decorrelates (seed, epoch) pairs that differ in a few bits.
  std::mt19937_64 rng(SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(epoch))));
  std::shuffle(records.begin(), records.end(), rng);
}

void FillEpochOrder(int64_t first, RecordOrder how, uint64_t seed, int64_t epoch,
                    absl::Span<int64_t> order) {
  std::iota(order.begin(), order.end(), first);
  if (how == RecordOrder::kShuffled) ShuffleForEpoch(seed, epoch, order);
}

}  // namespace pstrain
