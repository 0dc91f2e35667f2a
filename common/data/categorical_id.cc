#include "common/data/categorical_id.h"

#include "common/random/split_mix.h"

namespace pstrain {
namespace {

constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

uint64_t Fnv1a(absl::string_view bytes, uint64_t hash) {
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= kFnvPrime;
  }
  return hash;
}

}  // namespace

int64_t CategoricalId(absl::string_view feature, absl::string_view value, int64_t buckets) {
  // The feature's name, a separator no name ends in, then the value.
  const uint64_t hash =
      Fnv1a(value, Fnv1a(absl::string_view("\0", 1), Fnv1a(feature, kFnvOffsetBasis)));
  return static_cast<int64_t>(SplitMix64(hash) % static_cast<uint64_t>(buckets));
}

int64_t CategoricalId(absl::string_view feature, int64_t value, int64_t buckets) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(static_cast<uint64_t>(value) >> (8 * i));
  return CategoricalId(feature, absl::string_view(bytes, sizeof(bytes)), buckets);
}

}  // namespace pstrain
