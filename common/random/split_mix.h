#ifndef PSTRAIN_COMMON_RANDOM_SPLIT_MIX_H_
#define PSTRAIN_COMMON_RANDOM_SPLIT_MIX_H_

#include <cstdint>

namespace pstrain {

// SplitMix64's finaliser: a bijective mix of 64 bits with good avalanche,
// so inputs that differ in a few bits (ids, (seed, epoch) pairs) give
// unrelated outputs. Its values reach disk and the wire (which shard holds
// an embedding row, each epoch's record order, ledger checksums): it must
// never change. Thread-safe (a pure function).
constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_RANDOM_SPLIT_MIX_H_
