#include "server/ps/embedding_table.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace pstrain {

EmbeddingTable::EmbeddingTable(std::string name, const EmbeddingTableOptions& options,
                               Initializer init, const Optimizer& optimizer)
    : name_(std::move(name)),
      options_(options),
      init_(std::move(init)),
      dim_(options.dim),
      num_slots_(optimizer.num_slots()) {}

float* EmbeddingTable::RowPtr(int32_t slot) {
  return blocks_[slot / kRowsPerBlock].get() + (slot % kRowsPerBlock) * row_floats();
}

const float* EmbeddingTable::RowPtr(int32_t slot) const {
  return blocks_[slot / kRowsPerBlock].get() + (slot % kRowsPerBlock) * row_floats();
}

void EmbeddingTable::Lookup(absl::Span<const int64_t> ids, float* out) const {
  absl::ReaderMutexLock l(&mu_);
  // Rows are scattered over the table: find them all first, then copy with
  // the rows a few ids ahead already on their way into the cache.
  std::vector<int32_t> slots(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    auto it = index_.find(ids[i]);
    slots[i] = it == index_.end() ? kNone : it->second;
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i + kPrefetchDistance < ids.size()) Prefetch(slots[i + kPrefetchDistance]);
    float* dst = out + i * dim_;
    if (slots[i] != kNone) {
      std::memcpy(dst, RowPtr(slots[i]), dim_ * sizeof(float));
    } else {
      init_.FillRow(ids[i], absl::MakeSpan(dst, dim_));
    }
  }
}

void EmbeddingTable::Prefetch(int32_t slot) const {
  if (slot == kNone) return;
  const char* row = reinterpret_cast<const char*>(blocks_[slot / kRowsPerBlock].get() +
                                                  (slot % kRowsPerBlock) * row_floats());
  for (int64_t b = 0; b < row_floats() * 4; b += 64) __builtin_prefetch(row + b);
}

void EmbeddingTable::Unlink(int32_t slot) {
  const int32_t p = prev_[slot], n = next_[slot];
  if (p != kNone)
    next_[p] = n;
  else
    oldest_ = n;
  if (n != kNone)
    prev_[n] = p;
  else
    newest_ = p;
  prev_[slot] = next_[slot] = kNone;
}

void EmbeddingTable::PushNewest(int32_t slot) {
  prev_[slot] = newest_;
  next_[slot] = kNone;
  if (newest_ != kNone)
    next_[newest_] = slot;
  else
    oldest_ = slot;
  newest_ = slot;
}

void EmbeddingTable::EvictOldest() {
  const int32_t slot = oldest_;
  Unlink(slot);
  index_.erase(slot_ids_[slot]);
  free_.push_back(slot);
  --stats_.rows;
  ++stats_.evictions;
}

int32_t EmbeddingTable::Insert(int64_t id, const Optimizer& optimizer) {
  if (options_.max_bytes > 0) {
    while (stats_.rows > 0 && (stats_.rows + 1) * row_bytes() > options_.max_bytes) {
      EvictOldest();
    }
  }
  int32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<int32_t>(slot_ids_.size());
    if (slot % kRowsPerBlock == 0) {
      blocks_.emplace_back(new float[kRowsPerBlock * row_floats()]);
    }
    slot_ids_.push_back(0);
    prev_.push_back(kNone);
    next_.push_back(kNone);
  }
  slot_ids_[slot] = id;
  float* row = RowPtr(slot);
  init_.FillRow(id, absl::MakeSpan(row, dim_));
  optimizer.InitializeRowSlots(dim_, row);
  index_.emplace(id, slot);
  PushNewest(slot);
  ++stats_.rows;
  return slot;
}

void EmbeddingTable::Apply(const Optimizer& optimizer, const UpdateStep& step,
                           absl::Span<const int64_t> ids, const float* grad) {
  absl::MutexLock l(&mu_);
  const bool dynamic = options_.vocabulary_size == 0;
  // First find (or admit) every row, then update them with the rows a few
  // ids ahead already on their way into the cache.
  std::vector<int32_t> slots(ids.size(), kNone);
  const int64_t evictions_before = stats_.evictions;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    auto it = index_.find(id);
    if (it != index_.end()) {
      slots[i] = it->second;
      // Recency only matters to a table that evicts.
      if (options_.max_bytes > 0 && newest_ != slots[i]) {
        Unlink(slots[i]);
        PushNewest(slots[i]);
      }
      continue;
    }
    if (dynamic && options_.admit_after > 1) {
      if (static_cast<int64_t>(candidates_.size()) >= options_.max_candidates) {
        candidates_.clear();
      }
      int32_t& seen = candidates_[id];
      if (++seen < options_.admit_after) {
        ++stats_.dropped_updates;
        continue;
      }
      candidates_.erase(id);
    }
    slots[i] = Insert(id, optimizer);
    if (dynamic) ++stats_.admissions;
  }
  if (stats_.evictions != evictions_before) {
    // Rows found early in this push may have been evicted since (and their
    // slots reused): their updates are dropped with them.
    for (size_t i = 0; i < ids.size(); ++i) {
      if (slots[i] == kNone) continue;
      auto it = index_.find(ids[i]);
      if (it == index_.end() || it->second != slots[i]) slots[i] = kNone;
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i + kPrefetchDistance < ids.size()) Prefetch(slots[i + kPrefetchDistance]);
    if (slots[i] == kNone) continue;
    optimizer.ApplyToRow(step, grad + i * dim_, dim_, RowPtr(slots[i]));
  }
}

EmbeddingStats EmbeddingTable::stats() const {
  absl::ReaderMutexLock l(&mu_);
  EmbeddingStats s = stats_;
  s.bytes = s.rows * row_bytes();
  return s;
}

void EmbeddingTable::VisitRows(const std::function<void(int64_t, const float*)>& fn) const {
  absl::ReaderMutexLock l(&mu_);
  for (int32_t slot = oldest_; slot != kNone; slot = next_[slot]) {
    fn(slot_ids_[slot], RowPtr(slot));
  }
}

void EmbeddingTable::Clear() {
  blocks_.clear();
  index_.clear();
  slot_ids_.clear();
  prev_.clear();
  next_.clear();
  free_.clear();
  candidates_.clear();
  oldest_ = newest_ = kNone;
  stats_.rows = 0;
}

void EmbeddingTable::Replace(absl::Span<const int64_t> ids, absl::Span<const float> rows) {
  absl::MutexLock l(&mu_);
  Clear();
  const int64_t stride = row_floats();
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t slot = static_cast<int32_t>(i);
    if (slot % kRowsPerBlock == 0) blocks_.emplace_back(new float[kRowsPerBlock * stride]);
    slot_ids_.push_back(ids[i]);
    prev_.push_back(kNone);
    next_.push_back(kNone);
    std::memcpy(RowPtr(slot), rows.data() + i * stride, stride * sizeof(float));
    index_.emplace(ids[i], slot);
    PushNewest(slot);
  }
  stats_.rows = static_cast<int64_t>(ids.size());
}

}  // namespace pstrain
