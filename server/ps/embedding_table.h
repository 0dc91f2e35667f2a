#ifndef PSTRAIN_SERVER_PS_EMBEDDING_TABLE_H_
#define PSTRAIN_SERVER_PS_EMBEDDING_TABLE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "common/optimizer/initializer.h"
#include "common/optimizer/optimizer.h"

namespace pstrain {

struct EmbeddingTableOptions {
  // Elements per row. > 0.
  int64_t dim = 16;
  // 0: a dynamic table (any int64 id). Otherwise ids are in [0, this);
  // range checks are the caller's.
  int64_t vocabulary_size = 0;
  // Dynamic tables: an id gets a row once it has been seen in this many
  // pushes; until then it reads as its initial value and its gradients are
  // dropped. 1 admits at once. Higher values keep one-off ids (typos, rare
  // users) from taking memory, at the cost of ignoring their first updates.
  int32_t admit_after = 1;
  // Dynamic tables: bytes of rows (values and slots) this table may hold;
  // past it the least recently updated rows are evicted and forget their
  // training. 0: no budget. Must hold at least one row.
  int64_t max_bytes = 0;
  // Ids waiting for admission that are remembered with their counts. Past
  // it the counts are forgotten (rare ids start counting again), which
  // bounds the memory spent on ids that never reach admit_after.
  int64_t max_candidates = 1 << 20;
};

struct EmbeddingStats {
  int64_t rows = 0;
  int64_t bytes = 0;
  int64_t admissions = 0;
  int64_t evictions = 0;
  // Gradient rows dropped because their id was not admitted yet.
  int64_t dropped_updates = 0;
};

// The rows of one embedding table that this shard holds, with their
// optimizer slots, created on first update (lazily, so a row never pushed
// takes no memory and reads as its seeded initial value). Thread-safe:
// lookups share a lock, updates take it exclusively.
class EmbeddingTable {
 public:
  EmbeddingTable(std::string name, const EmbeddingTableOptions& options, Initializer init,
                 const Optimizer& optimizer);

  EmbeddingTable(const EmbeddingTable&) = delete;
  EmbeddingTable& operator=(const EmbeddingTable&) = delete;

  const std::string& name() const { return name_; }
  int64_t dim() const { return dim_; }
  const EmbeddingTableOptions& options() const { return options_; }
  // Floats per stored row: the value and each slot.
  int64_t row_floats() const { return dim_ * (1 + num_slots_); }
  int64_t row_bytes() const { return row_floats() * 4; }
  int num_slots() const { return num_slots_; }

  // Copies rows `ids` to `out` (dim() floats each); ids without a row read
  // as their initial value.
  void Lookup(absl::Span<const int64_t> ids, float* out) const;

  // Applies gradients (dim() floats per id) to rows `ids`, which must be
  // distinct; admits, counts and evicts as the options say.
  void Apply(const Optimizer& optimizer, const UpdateStep& step, absl::Span<const int64_t> ids,
             const float* grad);

  EmbeddingStats stats() const;

  // Calls fn(id, row) for each row, least recently updated first in a table
  // with a byte budget (otherwise in the order rows were created); `row` is
  // row_floats() floats: the value, then each slot. Under the read lock.
  void VisitRows(const std::function<void(int64_t id, const float* row)>& fn) const;

  // Replaces every row with `rows` (ids.size() * row_floats() floats, in
  // the VisitRows layout and order). Counters are kept.
  void Replace(absl::Span<const int64_t> ids, absl::Span<const float> rows);

 private:
  static constexpr int32_t kNone = -1;
  static constexpr int64_t kRowsPerBlock = 1024;
  // Rows ahead of the one being read or updated whose memory is prefetched.
  static constexpr size_t kPrefetchDistance = 8;

  float* RowPtr(int32_t slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Prefetch(int32_t slot) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  const float* RowPtr(int32_t slot) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Takes a free slot (growing the storage) for `id` with initial values.
  int32_t Insert(int64_t id, const Optimizer& optimizer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvictOldest() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Unlink(int32_t slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PushNewest(int32_t slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Clear() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const std::string name_;
  const EmbeddingTableOptions options_;
  const Initializer init_;
  const int64_t dim_;
  const int num_slots_;

  mutable absl::Mutex mu_;
  // Row storage in fixed blocks (no reallocation of held rows), a free
  // list of slots, and a doubly linked list of slots from the least (oldest_)
  // to the most (newest_) recently updated.
  std::vector<std::unique_ptr<float[]>> blocks_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int64_t, int32_t> index_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> slot_ids_ ABSL_GUARDED_BY(mu_);
  std::vector<int32_t> prev_ ABSL_GUARDED_BY(mu_);
  std::vector<int32_t> next_ ABSL_GUARDED_BY(mu_);
  std::vector<int32_t> free_ ABSL_GUARDED_BY(mu_);
  int32_t oldest_ ABSL_GUARDED_BY(mu_) = kNone;
  int32_t newest_ ABSL_GUARDED_BY(mu_) = kNone;
  absl::flat_hash_map<int64_t, int32_t> candidates_ ABSL_GUARDED_BY(mu_);
  EmbeddingStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_EMBEDDING_TABLE_H_
