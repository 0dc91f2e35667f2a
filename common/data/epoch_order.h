#ifndef PSTRAIN_COMMON_DATA_EPOCH_ORDER_H_
#define PSTRAIN_COMMON_DATA_EPOCH_ORDER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "common/data/block_layout.h"

namespace pstrain {

// The order one epoch reads a source's records in: position p of the epoch
// holds record RecordAt(p). It depends only on the source's record count
// (and block layout), shuffle, seed and the epoch, so every process that
// reads the same data (the workers of a cluster, the single-process
// trainer, a job resumed from a checkpoint) computes the same one; a
// checkpoint's finished position ranges mean the same records again.
// Thread-safe.
class EpochOrder {
 public:
  // Records held in memory, read at random: every record in sequence, or,
  // when `shuffle`, a permutation of all of them (ShuffleForEpoch). Holds
  // 8 bytes per record.
  static std::unique_ptr<EpochOrder> InMemory(int64_t num_records, bool shuffle, uint64_t seed,
                                              int64_t epoch);

  // Records streamed from files by blocks: in sequence, or, when `shuffle`,
  // the blocks in a permutation (the full ones, then the short ones that
  // end files), and the records of each window of layout.window_blocks
  // consecutive blocks of it in a permutation of their own. A window's
  // records are only ever read together, so a reader holds one window's
  // blocks at a time, and the windows of full blocks start at multiples of
  // window_blocks * (records of a full block). Holds 16 bytes per block and
  // the positions of the two windows read last.
  static std::unique_ptr<EpochOrder> Blocked(const BlockLayout& layout, bool shuffle, uint64_t seed,
                                             int64_t epoch);

  int64_t size() const { return num_records_; }

  // records[i] = the record at positions[i].
  // OutOfRange: a position outside [0, size()).
  absl::Status RecordsAt(absl::Span<const int64_t> positions, absl::Span<int64_t> records) const;

 private:
  struct Window {
    int64_t index = -1;
    std::vector<int64_t> records;  // position window_begin + i holds records[i]
  };

  EpochOrder(int64_t num_records, bool shuffle, uint64_t seed, int64_t epoch);
  // The records of window `window`, in their order (built or cached).
  std::shared_ptr<const Window> WindowRecords(int64_t window) const;

  const int64_t num_records_;
  const bool shuffle_;
  const uint64_t seed_;
  const int64_t epoch_;

  // In memory: the whole permutation (empty when not shuffled).
  std::vector<int64_t> records_;

  // Blocked and shuffled: the blocks in their epoch order, and where each
  // window of that order starts among the positions (one more entry: the
  // end).
  BlockLayout layout_;
  std::vector<int64_t> blocks_;
  std::vector<int64_t> window_starts_;

  mutable absl::Mutex mu_;
  mutable std::shared_ptr<const Window> recent_[2] ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_EPOCH_ORDER_H_
