#ifndef PSTRAIN_COMMON_PLACEMENT_ROW_PLACEMENT_H_
#define PSTRAIN_COMMON_PLACEMENT_ROW_PLACEMENT_H_

#include <cstdint>

#include "common/random/split_mix.h"

namespace pstrain {

// The shard that holds row `id` of every embedding table, as documented in
// protos/parameter_server.proto: splitmix64's finaliser of the id, modulo
// the number of shards. Workers place the rows they pull and push this way,
// and a shard refuses rows that place elsewhere. `num_shards` > 0.
// Thread-safe (a pure function).
inline int RowShard(int64_t id, int num_shards) {
  return static_cast<int>(SplitMix64(static_cast<uint64_t>(id)) %
                          static_cast<uint64_t>(num_shards));
}

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_PLACEMENT_ROW_PLACEMENT_H_
