#include "worker/push_incarnation.h"

#include <algorithm>

namespace pstrain {
namespace worker {

uint64_t NewPushIncarnation(absl::Time now, uint64_t random) {
  constexpr int kRandomBits = 12;
  // Before 1970 only with a broken clock; the random bits still differ.
  const uint64_t micros = static_cast<uint64_t>(std::max<int64_t>(0, absl::ToUnixMicros(now)));
  const uint64_t incarnation =
      (micros << kRandomBits) | (random & ((uint64_t{1} << kRandomBits) - 1));
  return incarnation != 0 ? incarnation : 1;
}

}  // namespace worker
}  // namespace pstrain
