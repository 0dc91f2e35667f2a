#ifndef PSTRAIN_WORKER_INTERNAL_ROW_SHARD_H_
#define PSTRAIN_WORKER_INTERNAL_ROW_SHARD_H_

#include <cstdint>

namespace pstrain {
namespace worker {
namespace internal {

// The shard holding row `id` of every embedding table, as
// protos/parameter_server.proto defines it: splitmix64's finaliser of the
// id's bits, modulo the number of shards. Kept here, behind one function,
// until the shared placement library replaces it. num_shards > 0.
inline int EmbeddingRowShard(int64_t id, int num_shards) {
  uint64_t z = static_cast<uint64_t>(id) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<int>(z % static_cast<uint64_t>(num_shards));
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_ROW_SHARD_H_
