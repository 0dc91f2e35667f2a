#ifndef PSTRAIN_COMMON_DATA_CATEGORICAL_ID_H_
#define PSTRAIN_COMMON_DATA_CATEGORICAL_ID_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace pstrain {

// The sparse id of categorical `value` (an int64 value's 8 little-endian
// bytes, or a bytes value) of feature `feature`: a stable 64-bit hash of
// both, modulo `buckets`. Its values reach checkpoints (they pick embedding
// rows) and the callers of an exported model compute it (docs/data.md
// spells it out): it must never change. Thread-safe.
int64_t CategoricalId(absl::string_view feature, absl::string_view value, int64_t buckets);
int64_t CategoricalId(absl::string_view feature, int64_t value, int64_t buckets);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_CATEGORICAL_ID_H_
