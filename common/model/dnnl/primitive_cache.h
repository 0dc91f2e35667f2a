#ifndef PSTRAIN_COMMON_MODEL_DNNL_PRIMITIVE_CACHE_H_
#define PSTRAIN_COMMON_MODEL_DNNL_PRIMITIVE_CACHE_H_

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace pstrain {

// The shapes that select one set of primitives (e.g. {batch} for an inner
// product of fixed sizes, {batch, height, width} for a convolution).
using PrimitiveKey = std::vector<int64_t>;

// A small cache of one layer's primitives (or anything costly to build) keyed
// by shape, so a training loop with a fixed batch size builds them once and a
// last, smaller batch or an evaluation batch adds one entry. When full, the
// least recently used entry is dropped. Thread-compatible.
template <typename Entry>
class PrimitiveCache {
 public:
  // `capacity` >= 1 entries.
  explicit PrimitiveCache(size_t capacity = 8) : capacity_(capacity < 1 ? 1 : capacity) {}

  PrimitiveCache(const PrimitiveCache&) = delete;
  PrimitiveCache& operator=(const PrimitiveCache&) = delete;

  // Returns the entry for `key`, building it with `build` (returning
  // absl::StatusOr<Entry>) on a miss. A failed build is returned and not cached.
  // The pointer stays valid until the next call.
  template <typename Build>
  absl::StatusOr<Entry*> GetOrBuild(const PrimitiveKey& key, Build&& build) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      ++hits_;
      return &it->second->second;
    }
    absl::StatusOr<Entry> built = std::forward<Build>(build)();
    if (!built.ok()) return built.status();
    ++misses_;
    if (order_.size() >= capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(key, std::move(built).value());
    index_[key] = order_.begin();
    return &order_.front().second;
  }

  size_t size() const { return order_.size(); }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  using Node = std::pair<PrimitiveKey, Entry>;

  const size_t capacity_;
  std::list<Node> order_;  // most recently used first
  absl::flat_hash_map<PrimitiveKey, typename std::list<Node>::iterator> index_;
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_DNNL_PRIMITIVE_CACHE_H_
